import Foundation
import Logging
import Testing
import Wearables
import YAML

@testable import Gateway

/// The Home Assistant add-on in deploy/homeassistant-addon, read as the Supervisor reads it and checked against Home
/// Assistant's documented add-on ("app") configuration — https://developers.home-assistant.io/docs/apps/configuration
/// (config.yaml's keys and types, the options schema's types, translations) and
/// https://developers.home-assistant.io/docs/apps/repository (repository.yaml) — and against the gateway it packages:
/// its version, its drivers, its log levels, its configuration's keys and defaults.
@Suite("Home Assistant add-on manifest")
struct AddOnManifestTests {
    static let repositoryFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // GatewayTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("deploy/homeassistant-addon")
    static let addOnFolder = repositoryFolder.appendingPathComponent("wear2mqtt")

    static func text(_ name: String, in folder: URL = addOnFolder) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    static func document(_ name: String, in folder: URL = addOnFolder) throws -> [String: ManifestValue] {
        let root = try #require(try YAMLComposer.compose(text(name, in: folder)), "\(name) is empty")
        return try #require(try ManifestValue(root).map, "\(name) is not a mapping")
    }

    static func manifest() throws -> [String: ManifestValue] { try document("config.yaml") }

    static func schema() throws -> [String: OptionSchema] {
        let manifest = try manifest()
        let schema = try #require(manifest["schema"]?.map, "config.yaml has no schema mapping")
        return try schema.mapValues(OptionSchema.init)
    }

    // MARK: - Home Assistant's documented configuration

    /// The keys of config.yaml the page documents ("Required" and "Optional configuration options"), with their types.
    static let documentedKeys: [String: DocumentedType] = [
        "name": .string, "version": .string, "slug": .string, "description": .string,
        "arch": .list(of: .choice(["aarch64", "amd64"])),
        "machine": .list(of: .string), "url": .url,
        "startup": .choice(["initialize", "system", "services", "application", "once"]),
        "webui": .string,
        "boot": .choice(["auto", "manual", "manual_only"]),
        "ports": .dictionary, "ports_description": .dictionary,
        "host_network": .bool, "host_ipc": .bool, "host_dbus": .bool, "host_pid": .bool, "host_uts": .bool,
        "devices": .list(of: .string), "homeassistant": .string,
        "hassio_role": .choice(["default", "homeassistant", "backup", "manager", "admin"]),
        "hassio_api": .bool, "homeassistant_api": .bool, "docker_api": .bool,
        "privileged": .list(of: .choice(["BPF", "CHECKPOINT_RESTORE", "DAC_READ_SEARCH", "IPC_LOCK", "NET_ADMIN", "NET_RAW", "PERFMON",
                                         "SYS_ADMIN", "SYS_MODULE", "SYS_NICE", "SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE", "SYS_TIME"])),
        "full_access": .bool, "apparmor": .boolOrString, "map": .list(of: .any), "environment": .dictionary,
        "audio": .bool, "video": .bool, "gpio": .bool, "usb": .bool, "uart": .bool, "udev": .bool, "devicetree": .bool,
        "kernel_modules": .bool, "stdin": .bool, "legacy": .bool,
        "options": .dictionary, "schema": .dictionaryOrFalse, "image": .string, "timeout": .integer, "tmpfs": .bool,
        "discovery": .list(of: .string), "services": .list(of: .string), "auth_api": .bool,
        "ingress": .bool, "ingress_port": .integer, "ingress_entry": .string, "ingress_stream": .bool,
        "panel_icon": .string, "panel_title": .string, "panel_admin": .bool,
        "backup": .choice(["hot", "cold"]), "backup_pre": .string, "backup_post": .string, "backup_exclude": .list(of: .string),
        "stage": .choice(["stable", "experimental", "deprecated"]), "init": .bool, "watchdog": .string,
        "realtime": .bool, "journald": .bool, "breaking_versions": .list(of: .string), "ulimits": .dictionary,
    ]

    @Test("every key of config.yaml is a documented key with a value of its documented type")
    func keysAndTypes() throws {
        for (key, value) in try Self.manifest() {
            guard let type = Self.documentedKeys[key] else {
                Issue.record("config.yaml: \(key) is not a documented add-on configuration key")
                continue
            }
            #expect(type.accepts(value), "config.yaml: \(key) is \(value), not \(type)")
        }
    }

    @Test("the required keys are there: name, version, slug, description, arch")
    func requiredKeys() throws {
        let manifest = try Self.manifest()
        for key in ["name", "version", "slug", "description", "arch"] {
            #expect(manifest[key] != nil, "config.yaml needs \(key)")
        }
        #expect(manifest["arch"]?.list?.isEmpty == false, "arch names no architecture")
    }

    @Test("slug, url, services, watchdog, ingress port and panel icon have the documented forms")
    func documentedForms() throws {
        let manifest = try Self.manifest()
        // "URI friendly": the unreserved characters of a URI (RFC 3986) but `~`, as the Supervisor checks.
        let slug = try #require(manifest["slug"]?.string)
        #expect(slug.wholeMatch(of: /[A-Za-z0-9._-]+/) != nil, "slug \(slug) is not URI friendly")
        let url = try #require(manifest["url"]?.string)
        #expect(url.wholeMatch(of: /https?:\/\/[^\s\/]+(\/\S*)?/) != nil, "url \(url) is not a web address")
        // `service:function`, the function one of provide, want, need; the Supervisor offers mqtt and mysql.
        for service in manifest["services"]?.list ?? [] {
            #expect(service.string?.wholeMatch(of: /(mqtt|mysql):(provide|want|need)/) != nil, "services: \(service)")
        }
        // http(s)://[HOST]:[PORT:n]…, [PROTO:option]://[HOST]:[PORT:n]…, or tcp://[HOST]:[PORT:n].
        let watchdog = try #require(manifest["watchdog"]?.string)
        let watched = try #require(watchdog.wholeMatch(of: /(?:https?|tcp|\[PROTO:\w+\]):\/\/\[HOST\]:\[PORT:(\d+)\](.*)/),
                                   "watchdog \(watchdog) is not of the documented form")
        let port = try #require(manifest["ingress_port"]?.integer, "ingress_port is not an integer")
        // 0 (a port chosen at run time) is for add-ons on the host network only.
        #expect((1...65_535).contains(port))
        // The gateway answers /health on the web interface's port, which is ingress's.
        #expect(Int(watched.output.1) == port && watched.output.2 == "/health")
        let icon = try #require(manifest["panel_icon"]?.string)
        #expect(icon.wholeMatch(of: /mdi:[a-z0-9]+(-[a-z0-9]+)*/) != nil, "panel_icon \(icon) is not an mdi: icon")
    }

    @Test("it asks for the host's D-Bus, the MQTT service and its own config folder only: no host network, no privileges, its own AppArmor profile")
    func leastAccess() throws {
        let manifest = try Self.manifest()
        #expect(manifest["host_dbus"] == .bool(true))
        #expect(manifest["services"] == .list([.string("mqtt:need")]))
        for key in ["host_network", "host_pid", "host_ipc", "host_uts", "privileged", "full_access", "docker_api", "devices", "usb", "uart",
                    "ports", "auth_api"] {
            #expect(manifest[key] == nil, "config.yaml asks for \(key), which the gateway does not use")
        }
        // One folder of its own, written to: the add-on's config folder (/config inside), where firmware packages go.
        #expect(manifest["map"] == .list([.map(["type": .string("addon_config"), "read_only": .bool(false)])]))
        #expect(manifest["hassio_api"] == .bool(false) && manifest["homeassistant_api"] == .bool(false))
        #expect(manifest["apparmor"] == .bool(true))
        #expect(FileManager.default.fileExists(atPath: Self.addOnFolder.appendingPathComponent("apparmor.txt").path))
    }

    @Test("every schema type is one Home Assistant documents; match() expressions compile and are anchored; nesting is at most two deep")
    func schemaTypes() throws {
        func check(_ schema: OptionSchema, at path: String) {
            switch schema {
            case .value(let text):
                guard let type = SchemaType(text) else {
                    Issue.record("schema.\(path): \(text) is not a documented type")
                    return
                }
                if case .match(let pattern) = type.kind {
                    // Python's re.match anchors only the start; an expression without `$` accepts any tail.
                    #expect(pattern.hasPrefix("^") && pattern.hasSuffix("$"), "schema.\(path): \(pattern) is not anchored at both ends")
                    #expect((try? NSRegularExpression(pattern: pattern)) != nil, "schema.\(path): \(pattern) does not compile")
                }
            case .list(let item): check(item, at: path + "[]")
            case .dictionary(let fields): for (key, field) in fields { check(field, at: path + "." + key) }
            case .invalid(let reason): Issue.record("schema.\(path): \(reason)")
            }
        }
        for (key, schema) in try Self.schema() {
            check(schema, at: key)
            #expect(schema.depth <= 2, "schema.\(key) nests deeper than two levels")
        }
    }

    @Test("options and schema agree: each default has a schema entry and passes it, each required entry has a default, optional ones have none")
    func optionsMatchSchema() throws {
        let options = try #require(try Self.manifest()["options"]?.map, "config.yaml has no options mapping")
        func check(_ defaults: [String: ManifestValue], against schema: [String: OptionSchema], at path: String) {
            for (key, value) in defaults {
                guard let entry = schema[key] else {
                    Issue.record("options\(path).\(key) has no schema entry")
                    continue
                }
                switch (entry, value) {
                case (.value(let text), _):
                    #expect(SchemaType(text)?.accepts(value) == true, "options\(path).\(key): \(value) does not pass \(text)")
                case (.list(let item), .list(let items)):
                    for element in items {
                        if case .dictionary(let fields) = item, let object = element.map {
                            check(object, against: fields, at: "\(path).\(key)[]")
                        } else if case .value(let text) = item {
                            #expect(SchemaType(text)?.accepts(element) == true, "options\(path).\(key)[]: \(element) does not pass \(text)")
                        } else {
                            Issue.record("options\(path).\(key)[]: \(element) does not have the schema's shape")
                        }
                    }
                case (.dictionary(let fields), .map(let object)): check(object, against: fields, at: "\(path).\(key)")
                default: Issue.record("options\(path).\(key): \(value) does not have the schema's shape")
                }
            }
            // Documented: "To make an option truly optional … put a `?` at the end of the data type and do not define any
            // default value"; anything else without a default must be given before the add-on can start.
            for (key, entry) in schema {
                if entry.isOptional {
                    #expect(defaults[key] == nil, "options\(path).\(key) has a default, which makes the optional \(key) required")
                } else {
                    #expect(defaults[key] != nil, "schema\(path).\(key) is required but has no default: the add-on would not start as installed")
                }
            }
        }
        check(options, against: try Self.schema(), at: "")
    }

    // MARK: - The gateway it packages

    @Test("the add-on's version is the gateway's, and the changelog's first entry is for it")
    func version() throws {
        let manifest = try Self.manifest()
        #expect(manifest["version"] == .string(Wear2MQTTVersion.current))
        let changelog = try Self.text("CHANGELOG.md")
        let firstEntry = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(firstEntry.map { $0.dropFirst(3).split(separator: " ").first.map(String.init) } == Wear2MQTTVersion.current,
                "CHANGELOG.md's first entry is \(firstEntry ?? "missing"), not \(Wear2MQTTVersion.current)")
    }

    /// `list(a|b|c)` of a schema entry at `path` (keys, `[]` for a list's item).
    static func choices(at path: [String]) throws -> [String] {
        var entry = OptionSchema.dictionary(try schema())
        for step in path {
            switch (entry, step) {
            case (.list(let item), "[]"): entry = item
            case (.dictionary(let fields), _): entry = try #require(fields[step], "schema has no \(path.joined(separator: "."))")
            default: Issue.record("schema has no \(path.joined(separator: "."))"); return []
            }
        }
        guard case .value(let text) = entry, case .list(let values)? = SchemaType(text)?.kind else {
            Issue.record("schema.\(path.joined(separator: ".")) is not a list(…)")
            return []
        }
        return values
    }

    @Test("the drivers a device may name are the gateway's registered drivers")
    func drivers() throws {
        let offered = try Self.choices(at: ["devices", "[]", "driver"])
        #expect(offered.count == Set(offered).count, "a driver is offered twice")
        #expect(Set(offered) == Set(WearableDrivers.all.drivers.map { driver in driver.name }))
    }

    @Test("the log levels are the ones the gateway's log_level takes, and each loads")
    func logLevels() throws {
        let offered = try Self.choices(at: ["log_level"])
        #expect(offered == Logger.Level.allCases.map(\.rawValue))
        for level in offered {
            #expect(try Configuration.parse(yaml: "gateway:\n  log_level: \(level)\n").gateway.logLevel.rawValue == level)
        }
    }

    @Test("the options' defaults are the gateway's defaults, and their nested keys are the gateway's keys")
    func defaultsAndKeys() throws {
        let options = try #require(try Self.manifest()["options"]?.map)
        let schema = try Self.schema()
        let gateway = Configuration()
        #expect(options["log_level"] == .string(gateway.gateway.logLevel.rawValue))
        #expect(options["base_topic"] == .string(gateway.mqtt.baseTopic))
        #expect(options["allow"] == .map(["clear_data": .bool(gateway.allow.clearData), "factory_reset": .bool(gateway.allow.factoryReset),
                                          "dfu": .bool(gateway.allow.dfu)]))
        #expect(options["homeassistant"] == .map(["enabled": .bool(gateway.homeassistant.enabled),
                                                  "discovery_prefix": .string(gateway.homeassistant.discoveryPrefix)]))
        #expect(options["devices"] == .list([]))

        func keys(_ entry: OptionSchema?) -> Set<String> {
            switch entry {
            case .dictionary(let fields)?: Set(fields.keys)
            case .list(let item)?: keys(item)
            default: []
            }
        }
        #expect(keys(schema["allow"]) == Set(Configuration.AllowSection.CodingKeys.allCases.map(\.stringValue)))
        #expect(keys(schema["homeassistant"]).isSubset(of: Configuration.HomeAssistantSection.CodingKeys.allCases.map(\.stringValue)))
        #expect(keys(schema["devices"]).isSubset(of: Configuration.DeviceEntry.CodingKeys.allCases.map(\.stringValue)))
        #expect(keys(schema["mqtt"]) == ["host", "port", "username", "password"])
    }

    // MARK: - The files beside it

    @Test("every option has a name and a description in translations/en.yaml, nested ones under fields, and nothing else is there")
    func translations() throws {
        let translations = try Self.document("translations/en.yaml")
        #expect(Set(translations.keys).isSubset(of: ["configuration", "network"]))
        let configuration = try #require(translations["configuration"]?.map, "translations/en.yaml has no configuration")
        func check(_ entries: [String: ManifestValue], against schema: [String: OptionSchema], at path: String) {
            #expect(Set(entries.keys) == Set(schema.keys), "translations \(path): \(entries.keys.sorted()) for the schema's \(schema.keys.sorted())")
            for (key, entry) in schema {
                guard let translation = entries[key]?.map else { continue }
                #expect(translation["name"]?.string?.isEmpty == false, "\(path).\(key) has no name")
                #expect(translation["description"]?.string?.isEmpty == false, "\(path).\(key) has no description")
                var nested = entry
                if case .list(let item) = nested { nested = item }
                if case .dictionary(let fields) = nested {
                    check(translation["fields"]?.map ?? [:], against: fields, at: "\(path).\(key).fields")
                } else {
                    #expect(translation["fields"] == nil, "\(path).\(key) has fields but no nested options")
                }
            }
        }
        check(configuration, against: try Self.schema(), at: "configuration")
    }

    @Test("DOCS.md explains every option")
    func documentation() throws {
        let docs = try Self.text("DOCS.md")
        for (key, entry) in try Self.schema() {
            var nested = entry
            if case .list(let item) = nested { nested = item }
            if case .dictionary(let fields) = nested, key != "devices" {
                for field in fields.keys { #expect(docs.contains("`\(key).\(field)`"), "DOCS.md does not explain \(key).\(field)") }
            } else {
                #expect(docs.contains("`\(key)`"), "DOCS.md does not explain \(key)")
            }
        }
    }

    @Test("repository.yaml has the documented keys: a name, the project's url, its maintainer")
    func repository() throws {
        let repository = try Self.document("repository.yaml", in: Self.repositoryFolder)
        #expect(Set(repository.keys).isSubset(of: ["name", "url", "maintainer"]))
        #expect(repository["name"]?.string?.isEmpty == false)
        #expect(repository["url"]?.string == (try Self.manifest()["url"]?.string))
        #expect(repository["maintainer"]?.string?.isEmpty == false)
    }

    @Test("apparmor.txt holds exactly one profile, named after the slug")
    func appArmorProfile() throws {
        let profile = try Self.text("apparmor.txt")
        // The Supervisor takes the profile's name from the one line that starts with `profile ` and loads it under the
        // add-on's full slug; nested profiles are indented.
        let names = profile.split(separator: "\n").compactMap { line in line.wholeMatch(of: /profile ([^ ]+).*/)?.output.1 }
        let slug = try Self.manifest()["slug"]?.string
        #expect(names.count == 1)
        #expect(names.first.map(String.init) == slug)
        #expect(profile.contains("#include <tunables/global>") && profile.contains("#include <abstractions/base>"))
    }

    @Test("the Dockerfile names its base, the gateway's image of this version; there is no build.yaml")
    func baseImage() throws {
        // build.yaml is no longer read by Home Assistant's builder and only with a deprecation warning by the
        // Supervisor, which since 2026.04 passes BUILD_FROM only from it: the Dockerfile's own default is what builds
        // (https://developers.home-assistant.io/blog/2026/04/02/builder-migration).
        for name in ["build.yaml", "build.yml", "build.json"] {
            #expect(!FileManager.default.fileExists(atPath: Self.addOnFolder.appendingPathComponent(name).path), "\(name) is deprecated")
        }
        let dockerfile = try Self.text("Dockerfile")
        let lines = dockerfile.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let from = try #require(lines.first { $0.hasPrefix("FROM ") }, "the Dockerfile has no FROM").dropFirst(5)
            .split(separator: " ").first.map(String.init) ?? ""
        var base = from
        if let argument = from.wholeMatch(of: /\$\{?(\w+)\}?/)?.output.1 {
            let declaration = lines.first { $0.hasPrefix("ARG \(argument)=") }
            base = declaration.map { String($0.dropFirst("ARG \(argument)=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? ""
        }
        #expect(base == "ghcr.io/wear2mqtt/wear2mqtt:\(Wear2MQTTVersion.current)", "the add-on builds from \(base.isEmpty ? "nothing" : base)")
    }
}

/// A YAML value as the Supervisor's YAML reader types it: `8099` an integer, `"8099"` and `0.1.0` strings, `true` a bool.
enum ManifestValue: Equatable, CustomStringConvertible {
    case string(String)
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case null
    indirect case list([ManifestValue])
    indirect case map([String: ManifestValue])

    struct Unreadable: Error, CustomStringConvertible { let description: String }

    init(_ node: YAMLNode) throws {
        switch node {
        case .scalar(let scalar):
            switch node.tag {
            case .bool: self = .bool(node.bool ?? false)
            case .int:
                guard let number = node.int else { throw Unreadable(description: "\(scalar.string) is no integer") }
                self = .integer(number)
            case .float: self = .number(node.float ?? .nan)
            case .null: self = .null
            default: self = .string(scalar.string)
            }
        case .sequence(let sequence):
            self = .list(try sequence.items.map(ManifestValue.init))
        case .mapping(let mapping):
            var map: [String: ManifestValue] = [:]
            for (key, value) in mapping.pairs {
                guard let name = key.scalar?.string else { throw Unreadable(description: "a key that is not text") }
                guard map[name] == nil else { throw Unreadable(description: "\(name) appears twice") }
                map[name] = try ManifestValue(value)
            }
            self = .map(map)
        }
    }

    var string: String? { if case .string(let text) = self { text } else { nil } }
    var integer: Int? { if case .integer(let number) = self { number } else { nil } }
    var list: [ManifestValue]? { if case .list(let items) = self { items } else { nil } }
    var map: [String: ManifestValue]? { if case .map(let entries) = self { entries } else { nil } }

    var description: String {
        switch self {
        case .string(let text): "\"\(text)\""
        case .bool(let value): "\(value)"
        case .integer(let number): "\(number)"
        case .number(let number): "\(number)"
        case .null: "null"
        case .list(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .map(let entries): "{" + entries.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

/// A config.yaml key's type as the configuration page's tables give it.
indirect enum DocumentedType: Sendable, CustomStringConvertible {
    case string, url, bool, integer, dictionary, any
    case boolOrString
    case dictionaryOrFalse
    case choice([String])
    case list(of: DocumentedType)

    func accepts(_ value: ManifestValue) -> Bool {
        switch (self, value) {
        case (.any, _): true
        case (.string, .string), (.bool, .bool), (.integer, .integer), (.dictionary, .map), (.dictionaryOrFalse, .map): true
        case (.url, .string(let text)): URL(string: text)?.scheme != nil
        case (.boolOrString, .bool), (.boolOrString, .string), (.dictionaryOrFalse, .bool(false)): true
        case (.choice(let allowed), .string(let text)): allowed.contains(text)
        case (.list(let element), .list(let items)): items.allSatisfy(element.accepts)
        default: false
        }
    }

    var description: String {
        switch self {
        case .string: "a string"
        case .url: "a url"
        case .bool: "a bool"
        case .integer: "an integer"
        case .dictionary: "a dict"
        case .any: "anything"
        case .boolOrString: "a bool or a string"
        case .dictionaryOrFalse: "a dict or false"
        case .choice(let allowed): "one of " + allowed.joined(separator: ", ")
        case .list(let element): "a list of \(element)"
        }
    }
}

/// One entry of config.yaml's `schema`: a type string, a list of one item schema, or a dict of them.
indirect enum OptionSchema {
    case value(String)
    case list(OptionSchema)
    case dictionary([String: OptionSchema])
    case invalid(String)

    init(_ value: ManifestValue) throws {
        switch value {
        case .string(let text): self = .value(text)
        case .list(let items) where items.count == 1: self = .list(try OptionSchema(items[0]))
        case .list: self = .invalid("a list in a schema holds exactly one item schema")
        case .map(let fields): self = .dictionary(try fields.mapValues(OptionSchema.init))
        default: self = .invalid("\(value) is neither a type, a list nor a dict")
        }
    }

    /// How many lists and dicts deep it goes ("Nested arrays and dictionaries are supported with a maximum depth of two").
    var depth: Int {
        switch self {
        case .value, .invalid: 0
        case .list(let item): 1 + item.depth
        case .dictionary(let fields): 1 + (fields.values.map(\.depth).max() ?? 0)
        }
    }

    /// A type ending in `?`; a list is optional when its item is a type ending in `?`, a dict never is.
    var isOptional: Bool {
        switch self {
        case .value(let text): text.hasSuffix("?")
        case .list(.value(let text)): text.hasSuffix("?")
        default: false
        }
    }
}

/// A schema type string as the configuration page lists them: str, bool, int, float (each with an optional `(min,max)`
/// range where documented), email, url, password, port, match(REGEX), list(a|b|…), device(filter); `?` makes it optional.
struct SchemaType {
    enum Kind {
        case string(ClosedRange<Int>?), bool, integer(ClosedRange<Int>?), float, email, url, password, port, device
        case match(String)
        case list([String])
    }

    let kind: Kind

    init?(_ text: String) {
        let body = text.hasSuffix("?") ? String(text.dropLast()) : text
        func range(_ low: Substring?, _ high: Substring?) -> ClosedRange<Int>? {
            let low = low.flatMap { Int($0) }, high = high.flatMap { Int($0) }
            guard low != nil || high != nil else { return nil }
            return (low ?? Int.min)...(high ?? Int.max)
        }
        switch body {
        case "bool": kind = .bool
        case "email": kind = .email
        case "url": kind = .url
        case "password": kind = .password
        case "port": kind = .port
        case "float": kind = .float
        default:
            if let parts = body.wholeMatch(of: /str(?:\((\d*),(\d*)\))?/)?.output {
                kind = .string(range(parts.1, parts.2))
            } else if let parts = body.wholeMatch(of: /int(?:\((-?\d*),(-?\d*)\))?/)?.output {
                kind = .integer(range(parts.1, parts.2))
            } else if body.wholeMatch(of: /float\((-?\d*\.?\d*),(-?\d*\.?\d*)\)/) != nil {
                kind = .float
            } else if body.wholeMatch(of: /device(\(subsystem=[a-z]+\))?/) != nil {
                kind = .device
            } else if let pattern = body.wholeMatch(of: /match\((.+)\)/)?.output.1 {
                kind = .match(String(pattern))
            } else if let values = body.wholeMatch(of: /list\((.+)\)/)?.output.1 {
                let choices = values.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                guard !choices.contains(where: \.isEmpty) else { return nil }
                kind = .list(choices)
            } else {
                return nil
            }
        }
    }

    /// Whether the Supervisor would take `value` for this type.
    func accepts(_ value: ManifestValue) -> Bool {
        switch (kind, value) {
        case (.string(let length), .string(let text)): return length?.contains(text.count) ?? true
        case (.password, .string): return true
        case (.bool, .bool): return true
        case (.integer(let limits), .integer(let number)): return limits?.contains(number) ?? true
        case (.float, .integer), (.float, .number): return true
        case (.email, .string(let text)): return text.contains("@")
        case (.url, .string(let text)): return URL(string: text)?.scheme != nil
        case (.port, .integer(let number)): return (1...65_535).contains(number)
        case (.device, .string): return true
        case (.match(let pattern), .string(let text)):
            guard let expression = try? NSRegularExpression(pattern: pattern) else { return false }
            return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))?.range.location == 0
        case (.list(let choices), .string(let text)): return choices.contains(text)
        default: return false
        }
    }
}
