/// The web interface's files (`Assets/`, embedded in the binary by SwiftPM's `embedInCode`), by the name the page
/// asks for. SwiftPM names each array after the file alone, so the table says which path each one is served at;
/// `EmbeddedAssetsTests` checks it lists every file of the folder, and nothing else.
enum EmbeddedAssets {
    static let files: [String: [UInt8]] = [
        "index.html": PackageResources.index_html,
        "app.css": PackageResources.app_css,
        "icon.svg": PackageResources.icon_svg,
        "app.js": PackageResources.app_js,
        "connection.js": PackageResources.connection_js,
        "dom.js": PackageResources.dom_js,
        "forms.js": PackageResources.forms_js,
        "plot.js": PackageResources.plot_js,
        "store.js": PackageResources.store_js,
        "pages/add.js": PackageResources.add_js,
        "pages/device-controls.js": PackageResources.device_controls_js,
        "pages/device-firmware.js": PackageResources.device_firmware_js,
        "pages/device-manage.js": PackageResources.device_manage_js,
        "pages/device-plots.js": PackageResources.device_plots_js,
        "pages/device-records.js": PackageResources.device_records_js,
        "pages/device.js": PackageResources.device_js,
        "pages/logs.js": PackageResources.logs_js,
        "pages/overview.js": PackageResources.overview_js,
        "pages/pairing.js": PackageResources.pairing_js,
        "pages/settings.js": PackageResources.settings_js,
        "pages/shared.js": PackageResources.shared_js,
    ]
}

/// One file as it is served: its bytes, its type, and a tag that changes with its content (for `If-None-Match`).
struct Asset: Sendable {
    let bytes: [UInt8]
    let contentType: String
    let entityTag: String

    init(name: String, bytes: [UInt8]) {
        self.bytes = bytes
        contentType = Self.contentType(of: name)
        // FNV-1a: not a security measure, only "did it change since the browser last saw it".
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        entityTag = "\"\(String(hash, radix: 16))\""
    }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }

    /// Every embedded file, made once.
    static let all: [String: Asset] = Dictionary(uniqueKeysWithValues: EmbeddedAssets.files.map { ($0.key, Asset(name: $0.key, bytes: $0.value)) })
}
