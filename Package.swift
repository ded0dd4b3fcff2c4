// swift-tools-version:6.1
import PackageDescription

/// Platforms without Apple's Combine and SwiftUI.
let nonApple: [Platform] = [.linux, .android, .windows, .wasi, .openbsd]
/// Apple's platforms, which have Network.framework.
let apple: [Platform] = [.macOS, .iOS, .tvOS, .watchOS, .visionOS, .macCatalyst]

let package = Package(
    name: "Atoll",
    // Realm apps' deployment targets. Nothing in the libraries Apple apps link (Atoll, AtollCore,
    // AtollRealmFile, AtollAdminClient) may need a newer OS unless marked `@available`:
    // AppleDeploymentTargetLintTests checks the APIs that would (docs/from-realm.md, "Apple platforms").
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1), .macCatalyst(.v16)],
    products: [
        .library(name: "Atoll", targets: ["Atoll"]),
        .library(name: "AtollCore", targets: ["AtollCore"]),
        .library(name: "AtollServer", targets: ["AtollServer"]),
        .library(name: "AtollAdminClient", targets: ["AtollAdminClient"]),
        .library(name: "AtollAppConfig", targets: ["AtollAppConfig"]),
        .library(name: "AtollRealmFile", targets: ["AtollRealmFile"]),
        .executable(name: "atoll-bench", targets: ["atoll-bench"]),
        .executable(name: "atoll-server", targets: ["atoll-server"]),
        .executable(name: "atoll", targets: ["atoll"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // TLS for the server (HummingbirdTLS) and the sync client's wss:// connections.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The app requests' HTTP client off Apple platforms (already in the graph through Hummingbird's testing).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        // The PostgreSQL store (`--store postgres://…`): several server nodes on one database.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // jwt-kit 5.8 needs swift-crypto 4.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // Combine where Apple's is missing (Linux): Realm's publishers are written once against
        // Combine's names and tested here (docs/from-realm.md, "Combine").
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        // The sync socket on Apple platforms: Network.framework, which brings up cellular data and
        // VPNs on demand (BSD sockets do not on iOS). WebSocketTransport.dial.
        .package(url: "https://github.com/apple/swift-nio-transport-services", from: "1.28.0"),
        // Lock-free atomics below macOS 15 / iOS 18 (the standard library's `Atomic` needs those).
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
    ],
    targets: [
        // Pure values and rules both sides agree on: no I/O, no clocks.
        // Atomics: ObjectId's counter and the `ManagedAtomic` adapter (Concurrency/ManagedAtomic+Arithmetic.swift).
        .target(name: "AtollCore", dependencies: [.product(name: "Atomics", package: "swift-atomics")]),
        // One app's configuration (auth providers, sync kind, rules, functions, remote access): the
        // model the server's configuration file, `atoll apps import` and the admin API share. Pure
        // values and their JSON; the server checks them.
        .target(name: "AtollAppConfig", dependencies: ["AtollCore"]),
        // A read-only reader of Realm's own file format (realm-core's), in pure Swift: the files
        // Realm apps already have (docs/realm-file-format.md).
        .target(
            name: "AtollRealmFile",
            dependencies: [
                // Encrypted Realm files: AES-256-CBC pages (CryptoExtras) authenticated with HMAC-SHA224.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // Encryption at rest: an SQLite VFS shim that seals every page of a realm's files; the
        // cryptography is Atoll's (swift-crypto), called back from the shim (docs/storage.md).
        .target(name: "CAtollCipher", dependencies: [.product(name: "GRDBSQLite", package: "GRDB.swift")]),
        // The client SDK: Realm-shaped API over SQLite.
        .target(
            name: "Atoll",
            dependencies: [
                "AtollCore",
                .product(name: "Atomics", package: "swift-atomics"),
                // Files Realm wrote are converted when a configuration opens one.
                "AtollRealmFile",
                "CAtollCipher",
                // AES-GCM and HKDF for encrypted realms.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The sync client's WebSocket (URLSession has none on Linux): WebSocketTransport.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // wss:// sync connections: trust roots and handshake errors (NIOPosix wraps
                // those of a connection attempt).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTransportServices", package: "swift-nio-transport-services",
                         condition: .when(platforms: apple)),
                // The default app transport where URLSession cannot take the app's trust roots
                // (NetworkTransport+NIO.swift): HTTP/1.1 on NIO with the sync connection's TLS.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: nonApple)),
                // Combine's publishers where the platform has no Combine.
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: nonApple)),
                .product(name: "OpenCombineDispatch", package: "OpenCombine", condition: .when(platforms: nonApple)),
            ]
        ),
        // A stand-in for the SwiftUI names Atoll's SwiftUI wrappers use, with SwiftUI's signatures:
        // SwiftUIShellTests compiles the wrappers against it where there is no SwiftUI (Linux).
        .target(
            name: "AtollSwiftUIStandIn",
            dependencies: [.product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: nonApple))]
        ),
        // The sync server library: HTTP auth API, (later) WebSocket sync, the store behind `ServerStore`.
        .target(
            name: "AtollServer",
            dependencies: [
                "AtollCore",
                "AtollAppConfig",
                "AtollAdminAPI",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                // The sync endpoint writes a connection's frames in batches (SyncRoutes.write).
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // HTTPS and wss:// when the configuration has `tls` (HTTPServerBuilder is in the core).
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The bounded HTTP/1.1 client of the e-mail/password webhooks (WebhookClient).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The admin API's client, for the `atoll` tool and tests (it does not link the server):
        // AsyncHTTPClient, not URLSession, whose Linux implementation (libcurl under dispatch
        // sources) spent half of a data import's CPU.
        .target(name: "AtollAdminClient", dependencies: [
            "AtollAdminAPI",
            "AtollCore",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOFoundationCompat", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        // The admin API's request and response bodies, for the server's routes and AdminClient alike.
        .target(name: "AtollAdminAPI"),
        // `atoll apps import`: an App Services app export translated into an Atoll app (pure; the
        // schema and rule types of AtollCore, the app configuration of AtollAppConfig).
        .target(name: "AtollAppImport", dependencies: ["AtollCore", "AtollAppConfig"]),
        // Linked into the test process only: bounds how many test cases Swift Testing runs at once
        // (parallelism.c says why).
        .target(name: "CAtollTestParallelism"),
        // Helpers shared by the test suites: temporary folders, fixtures.
        .target(
            name: "AtollTesting",
            dependencies: [
                "Atoll", "AtollCore", "AtollServer", "AtollAdminClient", .product(name: "Logging", package: "swift-log"),
                // FaultProxy: a TCP proxy that injects faults between clients and a server.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // TestIdentityProvider: ID tokens signed with keys the tests make.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // WebhookReceiver: the app's side of the e-mail/password webhooks, in tests.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // PostgresCluster: a throwaway PostgreSQL server for the store tests and benchmarks.
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // `atoll-bench load`: sync sessions spoken at the protocol level (the SDK's message types and
        // framer, no realm files), thousands in one process, on an open-loop schedule.
        .target(
            name: "AtollLoad",
            dependencies: [
                "AtollCore",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "atoll-bench",
            dependencies: ["Atoll", "AtollCore", "AtollServer", "AtollAdminClient", "AtollTesting", "AtollLoad",
                           .product(name: "GRDBSQLite", package: "GRDB.swift"),
                           // The limits suite's raw sync clients.
                           .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "Atomics", package: "swift-atomics")]
        ),
        .executableTarget(
            name: "atoll-server",
            dependencies: [
                "AtollServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // One device for the chaos tests, in a child process they can kill with SIGKILL.
        .executableTarget(name: "atoll-device", dependencies: ["Atoll"]),
        .executableTarget(
            name: "atoll",
            dependencies: [
                "AtollAdminClient", "AtollRealmFile", "AtollAppImport",
                // `atoll data import` of mongodump BSON: BSON.read, pure.
                "AtollCore",
                // `atoll realm-file convert` writes an Atoll realm.
                "Atoll",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "AtollCoreTests", dependencies: ["AtollCore", "AtollTesting"]),
        // The load generator's parts, and a short run against an in-process server.
        .testTarget(name: "AtollLoadTests", dependencies: ["AtollLoad", "AtollCore", "AtollServer", "AtollTesting"]),
        // Real files written by Realm (realm-core's test files, Apache-2.0, see Fixtures/README.md).
        .testTarget(
            name: "AtollRealmFileTests",
            dependencies: [
                "AtollRealmFile",
                // TestEncryptor writes Realm's page encryption to test the reader against.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AtollServerTests",
            dependencies: [
                "AtollServer",
                // The admin API's bodies, checked on their own (AdminAPIBodyTests).
                "AtollAdminAPI",
                "AtollCore",
                // ManualClock: tests move the server's time instead of waiting for it.
                "AtollTesting",
                // Memory tests measure the server alone, in its own process (AtollTesting's ServerProcess).
                "atoll-server",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // A real WebSocket client for the sync endpoint's tests (NIOPosix: an event loop
                // group of a load-generating client's own).
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // To sign custom JWTs and forge access tokens in tests.
                .product(name: "JWTKit", package: "jwt-kit"),
                // To check the e-mail/password webhooks' signatures.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // To read the store's SQLite settings back.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "AtollTests",
            dependencies: [
                "Atoll", "AtollCore", "AtollAdminClient", "AtollTesting", "CAtollTestParallelism",
                // AppImportSyncTests: an App Services export imported, then synced by users in each role.
                "AtollAppImport",
                // RealmFormatConversionTests read Realm's files to know what a conversion must give.
                "AtollRealmFile",
                .product(name: "GRDB", package: "GRDB.swift"),
                // To check the NIO error under a tlsHandshakeFailed SyncError.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Raw peers for WebSocketTransportTests.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // Combine's names on Linux, for the publishers' tests.
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: nonApple)),
                .product(name: "OpenCombineDispatch", package: "OpenCombine", condition: .when(platforms: nonApple)),
            ]),
        // The seed pages' Swift samples, compiled with only the import and the server URL changed.
        .testTarget(name: "SeedSampleTests", dependencies: ["Atoll", "AtollAdminClient", "AtollTesting"]),
        // Realm app code in Realm's style, compiled in Swift 5 mode as most apps are: each file is
        // what an app using one part of the API writes, with only the import changed.
        .testTarget(
            name: "AppCompatibilityTests",
            // AtollServer: a test's own server configuration (apps, e-mail/password webhooks).
            dependencies: ["Atoll", "AtollServer", "AtollTesting",
                           // `Locked`, where a test waits for an app's callback.
                           "AtollCore",
                           // `import Combine` where there is none: OpenCombine's shim.
                           .product(name: "OpenCombineShim", package: "OpenCombine", condition: .when(platforms: nonApple))],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Atoll's SwiftUI wrappers (Sources/Atoll/SwiftUI/Shell, linked here) compiled and driven
        // against AtollSwiftUIStandIn where SwiftUI does not exist; on Apple platforms Atoll
        // compiles them against SwiftUI and this target compiles nothing.
        .testTarget(
            name: "SwiftUIShellTests",
            dependencies: [
                "Atoll", "AtollTesting", "AtollSwiftUIStandIn",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: nonApple)),
                .product(name: "OpenCombineDispatch", package: "OpenCombine", condition: .when(platforms: nonApple)),
            ],
            swiftSettings: [.define("ATOLL_SWIFTUI_CHECK"), .define("ATOLL_SWIFTUI_STAND_IN", .when(platforms: nonApple))]
        ),
        // Sync under injected faults (FaultProxy), a killed server process and killed clients.
        // `atoll-server` and `atoll-device` are dependencies so that they are built before these
        // tests run them (`ServerProcess`, `DeviceProcess`).
        .testTarget(
            name: "ChaosTests",
            dependencies: ["Atoll", "AtollCore", "AtollServer", "AtollTesting", "atoll-server", "atoll-device",
                           .product(name: "NIOCore", package: "swift-nio")]
        ),
        // The `atoll` tool, parsed and run as typed, against an in-process server.
        .testTarget(
            name: "AtollCommandTests",
            dependencies: ["atoll", "Atoll", "AtollAdminClient", "AtollAppImport", "AtollCore", "AtollServer", "AtollTesting",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
