// swift-tools-version: 6.1
import PackageDescription

/// Targets follow the data path of ../shared/STYLE.md: C shims → transports → gateway → thin executables.
let package = Package(
    name: "wear2mqtt",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "wear2mqtt", targets: ["wear2mqtt"]),
        .executable(name: "wear2mqtt-sim", targets: ["wear2mqtt-sim"]),
        .executable(name: "wear2mqtt-bench", targets: ["wear2mqtt-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.0.0"),
        // Without the default BinaryDelimitedStreams trait: it imports full Foundation, which links ICU (issue 43).
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0", traits: ["FieldMaskUtilities"]),
    ],
    targets: [
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        /// The system's OpenSSL (libssl3, already loaded for libmosquitto's TLS): the web interface's HTTPS.
        .systemLibrary(
            name: "CTLS",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        /// The system's libyaml: YAML without a Foundation-based library (docs/decisions.md, "A binary without ICU").
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        /// The system's zlib: a firmware package's deflated entries and CRC-32 (docs/decisions.md, "A binary without
        /// ICU": ZIPFoundation imports all of Foundation).
        .systemLibrary(
            name: "CSystemZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        /// YAML documents as node trees with lines, and `Codable` over them: the configuration file and the scenarios.
        .target(name: "YAML", dependencies: ["CYAML"]),
        /// SHA-2, HMAC, PBKDF2, ChaCha20-Poly1305 and X25519 from the system's libcrypto (docs/decisions.md, "A binary
        /// without ICU": swift-crypto imports all of Foundation on Linux).
        .target(name: "SystemCrypto", dependencies: ["CTLS"]),
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        /// Linux's epoll, eventfd and recvmmsg, and the thread name, for the event loop and the notification reader.
        .target(name: "CEpoll"),
        /// The data path's event loop: one thread over epoll, its timers and its task queue (and the wake pipe).
        .target(
            name: "EventLoop",
            dependencies: ["CEpoll", .product(name: "HeapModule", package: "swift-collections")]
        ),
        /// Typed D-Bus over libdbus-1: values, one owning thread per connection, calls, signals, exported objects; and
        /// a receive-only signal socket read without libdbus (StartNotify values).
        .target(
            name: "DBus",
            dependencies: [
                "CDBus",
                "EventLoop",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// BlueZ client: adapters, devices, GATT, notification streams, pairing agent.
        .target(
            name: "BlueZ",
            dependencies: [
                "CEpoll",
                "DBus",
                "EventLoop",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// ESPHome's native API for Bluetooth proxies as remote radios (issue 42): its frames, the Noise handshake that
        /// encrypts them, and the protobuf messages a proxy client uses.
        .target(
            name: "ESPHome",
            dependencies: [
                "BlueZ",
                "DBus",
                "EventLoop",
                .product(name: "Logging", package: "swift-log"),
                "SystemCrypto",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            // The trimmed schema and the scripts that make it and api.pb.swift (committed, so builds need no protoc).
            exclude: ["Protobuf/api.proto", "Protobuf/regenerate", "Protobuf/trim.py"]
        ),
        /// Device model and drivers; each driver's pure codec sits in its own folder.
        .target(
            name: "Wearables",
            dependencies: [
                "BlueZ",
                "EventLoop",
                .product(name: "Logging", package: "swift-log"),
                "SystemCrypto",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: ["Polar/Protobuf/psftp.proto", "Polar/Protobuf/regenerate"]
        ),
        /// Nordic DFU: firmware packages, the init packet, Secure and Legacy DFU codecs and clients, and the transfer
        /// over a `DeviceLink`. The gateway runs it for any driver's device.
        .target(
            name: "Firmware",
            dependencies: [
                "Wearables",
                .product(name: "Logging", package: "swift-log"),
                "SystemCrypto",
                "CSystemZlib",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            // The schema and the script that turns it into dfu-init.pb.swift (committed, so builds need no protoc).
            exclude: ["Protobuf/dfu-init.proto", "Protobuf/regenerate"]
        ),
        /// Simulated peripherals on the product's codecs (standard, Bose, E4, GoFIT, ActiGraph, Nordic bootloaders):
        /// for the simulator, the tests and the bench; never linked into `wear2mqtt`.
        .target(
            name: "SimulatedWearables",
            dependencies: [
                "EventLoop",
                "Wearables",
                "Firmware",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        /// A BlueZ-compatible D-Bus service with simulated wearables, for tests and the demo.
        .target(
            name: "Simulator",
            dependencies: [
                "BlueZ",
                "DBus",
                "ESPHome",
                "EventLoop",
                "Wearables",
                "SimulatedWearables",
                "YAML",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "wear2mqtt-sim",
            dependencies: [
                "Simulator",
                "ESPHome",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "MQTT",
            dependencies: [
                "CMosquitto",
                "CSystemZlib",
                "EventLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "Gateway",
            dependencies: [
                "ESPHome",
                "MQTT",
                "EventLoop",
                "DBus",
                "BlueZ",
                "Wearables",
                "Firmware",
                "YAML",
                .product(name: "Logging", package: "swift-log"),
                "SystemCrypto",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        /// `GET /metrics` over HTTP/1.1 (swift-nio), started only with `metrics.enabled`: its threads cost nothing
        /// otherwise.
        .target(
            name: "MetricsExporter",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        /// The web interface (docs/frontend.md): its embedded page and the WebSocket that carries the MQTT contract to
        /// browsers, over HTTP/1.1 on swift-nio, started only with `frontend.enabled`.
        .target(
            name: "Frontend",
            dependencies: [
                "Gateway",
                "CTLS",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("Assets")]
        ),
        .executableTarget(
            name: "wear2mqtt",
            dependencies: [
                "Gateway",
                "Frontend",
                "MetricsExporter",
                "MQTT",
                "EventLoop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        /// Fixtures for tests that run real processes: a mosquitto broker on a free loopback port,
        /// certificates, temporary state directories, child processes cleaned up by pid.
        .target(
            name: "Wear2MQTTTesting",
            dependencies: ["MQTT", "DBus", "BlueZ", "Wearables", "SimulatedWearables", "Simulator", "Gateway"]
        ),
        /// The end-to-end benchmark (docs/performance.md): broker, private bus, in-process simulator, the gateway
        /// and the baselines it is measured against. Release builds only.
        .executableTarget(
            name: "wear2mqtt-bench",
            dependencies: [
                "Gateway",
                "Simulator",
                "BlueZ",
                "MQTT",
                "CMosquitto",
                "CDBus",
                "CEpoll",
                "DBus",
                "EventLoop",
                "Wearables",
                "SimulatedWearables",
                "Wear2MQTTTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["python"]
        ),
        /// libFuzzer targets over every codec, the JSON and request parsers and the configuration loader
        /// (docs/reliability.md, `Tests/fuzz/run`); never linked into `wear2mqtt`.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "ESPHome", "Wearables", "Firmware", "MQTT", "Gateway", "DBus", "CDBus"]
        ),
        /// The fuzz targets as one libFuzzer binary (built with `--sanitize fuzzer -DFUZZING`), or, built plainly,
        /// a replayer of saved inputs.
        .executableTarget(name: "wear2mqtt-fuzz", dependencies: ["FuzzTargets"]),
        /// The module import rules of docs/architecture.md, checked against the sources (no dependencies).
        .testTarget(name: "ArchitectureTests", dependencies: ["Wearables"]),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "Wear2MQTTTesting"]),
        .testTarget(name: "ESPHomeTests", dependencies: ["ESPHome", "SystemCrypto",
                                                   .product(name: "SwiftProtobuf", package: "swift-protobuf")]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "CDBus", "SimulatedWearables", "Wear2MQTTTesting"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "Simulator", "wear2mqtt-sim", "Wear2MQTTTesting"]),
        .testTarget(name: "WearablesTests", dependencies: ["Wearables", "SimulatedWearables", "Wear2MQTTTesting"]),
        .testTarget(name: "YAMLTests", dependencies: ["YAML"]),
        .testTarget(name: "FirmwareTests", dependencies: ["Firmware", "Wearables", "SimulatedWearables"]),
        .testTarget(name: "SimulatedWearablesTests", dependencies: ["SimulatedWearables", "Wearables", "Firmware", "Wear2MQTTTesting"]),
        .testTarget(
            name: "SimulatorTests",
            dependencies: ["Simulator", "BlueZ", "DBus", "Wearables", "Firmware", "SimulatedWearables", "wear2mqtt-sim", "Wear2MQTTTesting"],
            exclude: ["bleak_interop.py", "esphome_interop.py"]
        ),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets", "wear2mqtt-fuzz", "Wear2MQTTTesting"]),
        .testTarget(name: "GatewayTests", dependencies: ["Gateway", "YAML", "BlueZ", "Wearables", "Firmware", "SimulatedWearables", "Wear2MQTTTesting"]),
        .testTarget(name: "FrontendTests", dependencies: ["Frontend", "Gateway", "Wear2MQTTTesting"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["wear2mqtt", "wear2mqtt-sim", "Gateway", "MQTT", "Simulator", "Wearables", "Firmware", "SimulatedWearables", "ESPHome",
                           "EventLoop", "Wear2MQTTTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
