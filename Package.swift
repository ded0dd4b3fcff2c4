// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Atoll",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Atoll", targets: ["Atoll"]),
        .library(name: "AtollCore", targets: ["AtollCore"]),
        .library(name: "AtollServer", targets: ["AtollServer"]),
        .library(name: "AtollTesting", targets: ["AtollTesting"]),
        .executable(name: "atoll-bench", targets: ["atoll-bench"]),
        .executable(name: "atoll-server", targets: ["atoll-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Pure values and rules both sides agree on: no I/O, no clocks.
        .target(name: "AtollCore"),
        // The client SDK: Realm-shaped API over SQLite.
        .target(
            name: "Atoll",
            dependencies: [
                "AtollCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The sync server library (grows in the sync issue).
        .target(name: "AtollServer", dependencies: ["AtollCore"]),
        // Helpers shared by the test suites: temporary folders, fixtures.
        .target(name: "AtollTesting", dependencies: ["Atoll", "AtollCore"]),
        .executableTarget(
            name: "atoll-bench",
            dependencies: ["Atoll", "AtollCore", .product(name: "GRDBSQLite", package: "GRDB.swift")]
        ),
        .executableTarget(name: "atoll-server", dependencies: ["AtollServer"]),
        .testTarget(name: "AtollCoreTests", dependencies: ["AtollCore"]),
        .testTarget(name: "AtollTests", dependencies: ["Atoll", "AtollCore", "AtollTesting", .product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v6]
)
