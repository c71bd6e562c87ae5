// swift-tools-version: 6.1
import PackageDescription

/// Targets follow the data path of ../shared/STYLE.md: C shims → transports → gateway → thin executables.
let package = Package(
    name: "wear2mqtt",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "wear2mqtt", targets: ["wear2mqtt"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(
            name: "MQTT",
            dependencies: [
                "CMosquitto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "Gateway",
            dependencies: [
                "MQTT",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "wear2mqtt",
            dependencies: [
                "Gateway",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        /// Fixtures for tests that run real processes: a mosquitto broker on a free loopback port,
        /// certificates, temporary state directories, child processes cleaned up by pid.
        .target(
            name: "Wear2MQTTTesting",
            dependencies: ["MQTT"]
        ),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "Wear2MQTTTesting"]),
        .testTarget(name: "GatewayTests", dependencies: ["Gateway", "Wear2MQTTTesting"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["wear2mqtt", "Gateway", "Wear2MQTTTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
