import Foundation
import Testing

@testable import Frontend

@Suite("Embedded assets")
struct EmbeddedAssetsTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Frontend/Assets")

    @Test("the table lists every file of Sources/Frontend/Assets, and each is served with its own bytes")
    func everyFile() throws {
        let walker = try #require(FileManager.default.enumerator(at: Self.folder, includingPropertiesForKeys: [.isRegularFileKey]))
        var names: Set<String> = []
        for case let url as URL in walker where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            let name = url.path.replacingOccurrences(of: Self.folder.path + "/", with: "")
            names.insert(name)
            #expect(Asset.all[name]?.bytes == Array(try Data(contentsOf: url)), "\(name) differs from the embedded copy")
        }
        #expect(names == Set(EmbeddedAssets.files.keys))
    }

    @Test("the page uses relative URLs only, so it works under any prefix (Home Assistant ingress)")
    func relativeURLs() throws {
        for (name, asset) in Asset.all where name.hasSuffix(".html") || name.hasSuffix(".js") || name.hasSuffix(".css") {
            let text = String(decoding: asset.bytes, as: UTF8.self)
            for absolute in ["src=\"/", "href=\"/", "from \"/", "from '/", "url(/", "new URL(\"/", "\"/api/"] {
                #expect(!text.contains(absolute), "\(name) has an absolute URL (\(absolute))")
            }
            #expect(!text.contains("http://") && !text.contains("https://") || name.hasSuffix(".svg"),
                    "\(name) names another site")
        }
    }

    @Test("types and tags")
    func types() throws {
        #expect(Asset.all["index.html"]?.contentType == "text/html; charset=utf-8")
        #expect(Asset.all["app.js"]?.contentType == "text/javascript; charset=utf-8")
        #expect(Asset.all["icon.svg"]?.contentType == "image/svg+xml")
        #expect(Set(Asset.all.values.map(\.entityTag)).count == Asset.all.count)
    }
}
