// swift-tools-version:6.0
import Foundation
import PackageDescription

// The floor is the SDK's (RoostClient): apps on iOS 15 / macOS 12 add it by URL. The server's
// targets use Synchronization.Mutex (macOS 15); they are built on Linux, where the floor does
// not apply, and an app's build never compiles them (SwiftPM builds only the product's targets).
// To build the server or the whole test suite on a Mac, set ROOST_SERVER_ON_MACOS=1.
let serverOnMac = ProcessInfo.processInfo.environment["ROOST_SERVER_ON_MACOS"] != nil

let package = Package(
    name: "Roost",
    platforms: [
        serverOnMac ? .macOS(.v15) : .macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1),
    ],
    products: [
        .executable(name: "roost", targets: ["roost"]),
        .library(name: "RoostServer", targets: ["RoostServer"]),
        .library(name: "RoostClient", targets: ["RoostClient"]),
    ],
    targets: [
        // C libraries from Debian's packages, one systemLibrary each.
        .systemLibrary(
            name: "CLibEvent",
            pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"]), .brew(["libevent"])]
        ),
        // TLS: OpenSSL 3 and libevent's bufferevent_openssl (in libevent-dev, linked in the modulemap).
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev", "libevent-dev"]), .brew(["openssl@3", "libevent"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // Duktape, the JavaScript engine of the script worker processes.
        .systemLibrary(
            name: "CDuktape",
            pkgConfig: "duktape",
            providers: [.apt(["duktape-dev"])]
        ),
        // libcurl with nghttp2: the HTTP/2 client of the push providers (APNs, FCM).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),

        // Our own few lines of C, for what Swift cannot call (variadic syscall()).
        .target(name: "CRoostSystem"),

        // Pure Swift layers, bottom up.
        .target(name: "RoostJSON"),
        .target(name: "RoostQuery"),
        // The error codes the server sends and the SDK decodes (its dependents: below the list).
        .target(name: "RoostErrorCodes"),
        // The frames between the server and its script worker processes.
        .target(name: "RoostScriptProtocol", dependencies: ["RoostJSON"]),
        // The script worker process's loop: Duktape heaps serving the frames above.
        .target(name: "RoostScriptWorker", dependencies: ["CDuktape", "RoostJSON", "RoostScriptProtocol"]),
        // Blocking thread pools, under every thread Roost owns (its dependents: below the list).
        .target(name: "RoostThreads"),
        .target(name: "RoostHTTP", dependencies: ["CLibEvent", "COpenSSL"]),
        // Storage contracts, pure Swift: store protocols, DTOs, `SQL`, migrations as values.
        .target(name: "RoostStore", dependencies: ["RoostJSON", "RoostQuery"]),
        // The SQLite driver: the connection, the writer, the reader pool, backups and its stores.
        .target(
            name: "RoostSQLite",
            dependencies: ["CSQLite", "CRoostSystem", "RoostStore", "RoostJSON", "RoostQuery"]),
        // The PostgreSQL driver: libpq, the pool, the listener and its stores.
        .target(name: "RoostPostgres", dependencies: ["CLibPQ", "RoostStore", "RoostQuery", "RoostJSON"]),
        .target(
            name: "RoostCore",
            dependencies: ["RoostStore", "RoostQuery", "RoostJSON", "CSodium", "CRoostSystem"]),
        // Server-side JavaScript: a pool of worker processes and what the server does for them.
        .target(
            name: "RoostScripts",
            dependencies: ["RoostCore", "RoostJSON", "RoostScriptProtocol", "CRoostSystem"]),
        .target(
            name: "RoostServer",
            dependencies: ["RoostHTTP", "RoostCore", "RoostQuery", "RoostJSON", "RoostStore", "RoostScripts"]),
        // Push providers: APNs and FCM senders over libcurl, JWTs signed with OpenSSL.
        .target(name: "RoostPush", dependencies: ["RoostCore", "RoostJSON", "RoostThreads", "COpenSSL", "CCurl"]),
        // Where a server is composed: the drivers chosen for the configuration.
        .target(
            name: "RoostDrivers",
            dependencies: ["RoostServer", "RoostCore", "RoostStore", "RoostSQLite", "RoostPostgres", "RoostPush"]),
        .executableTarget(
            name: "roost",
            dependencies: [
                "RoostServer", "RoostHTTP", "RoostCore", "RoostStore", "RoostQuery", "RoostPostgres",
                "RoostSQLite", "RoostDrivers", "RoostPush", "CRoostSystem", "RoostScriptWorker",
            ]),
        // The SDK: Foundation only, never a server module.
        .target(name: "RoostClient", resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Examples/: the seeds' apps on the SDK, each also run by the end-to-end tests.
        .target(name: "ExampleSupport", dependencies: ["RoostClient"], path: "Examples/ExampleSupport"),
        .executableTarget(
            name: "Chirp", dependencies: ["RoostClient", "ExampleSupport"], path: "Examples/Chirp"),
        .executableTarget(
            name: "WouldYa", dependencies: ["RoostClient", "ExampleSupport"], path: "Examples/WouldYa"),
        .executableTarget(
            name: "TransferProbe", dependencies: ["RoostClient", "ExampleSupport"],
            path: "Examples/TransferProbe"),
        .executableTarget(
            name: "Acronyms", dependencies: ["RoostClient", "ExampleSupport"], path: "Examples/Acronyms"),
        .executableTarget(
            name: "Tokens", dependencies: ["RoostClient", "ExampleSupport"], path: "Examples/Tokens"),
        .executableTarget(
            name: "SessionCheck", dependencies: ["RoostClient", "ExampleSupport"],
            path: "Examples/SessionCheck"),
        // Shared by the test targets only: a raw-socket HTTP client and server fixtures.
        .target(
            name: "RoostTestSupport",
            dependencies: [
                "RoostServer", "RoostCore", "RoostHTTP", "RoostDrivers", "RoostSQLite", "RoostPostgres", "CRoostSystem",
                "RoostStore", "RoostScripts",
            ]),

        .testTarget(name: "RoostJSONTests", dependencies: ["RoostJSON"]),
        .testTarget(name: "RoostQueryTests", dependencies: ["RoostQuery"]),
        .testTarget(name: "RoostThreadsTests", dependencies: ["RoostThreads"]),
        .testTarget(
            name: "RoostScriptWorkerTests",
            dependencies: ["RoostScriptWorker", "RoostScriptProtocol", "RoostJSON"]),
        .testTarget(name: "RoostHTTPTests", dependencies: ["RoostHTTP", "RoostTestSupport"]),
        .testTarget(name: "RoostStoreTests", dependencies: ["RoostStore", "RoostSQLite", "RoostQuery"]),
        .testTarget(
            name: "RoostPostgresTests",
            dependencies: [
                "RoostPostgres", "RoostSQLite", "RoostStore", "RoostQuery", "RoostJSON", "RoostCore",
                "RoostServer", "RoostDrivers", "RoostTestSupport",
            ],
            // Dumps of databases an earlier release made, for the upgrade tests.
            exclude: ["Fixtures"]),
        .testTarget(
            name: "RoostServerTests",
            dependencies: [
                "RoostServer", "RoostHTTP", "RoostJSON", "RoostStore", "RoostSQLite", "RoostScripts",
                "RoostDrivers", "RoostTestSupport",
            ],
            // The TLS tests' Python client, run as a child process.
            exclude: ["tls_client.py"]),
        // The push senders against fake providers (Tests/fakes, Python h2) that speak the protocols.
        .testTarget(
            name: "RoostPushTests",
            dependencies: ["RoostPush", "RoostCore", "RoostJSON", "COpenSSL", "RoostTestSupport"]),
        // The SDK's own rules on scripted answers: no server module, so they run on Apple platforms.
        .testTarget(name: "RoostClientUnitTests", dependencies: ["RoostClient"]),
        // The SDK against a real server.
        .testTarget(
            name: "RoostClientTests",
            dependencies: ["RoostClient", "RoostServer", "RoostCore", "RoostDrivers", "RoostTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// The modules whose threads are RoostThreads pools (kept out of the list above so that the
// edges merge apart from changes to the targets' own lines).
for dependent in package.targets where ["RoostHTTP", "RoostCore", "RoostScripts", "RoostSQLite", "RoostPostgres"].contains(dependent.name) {
    dependent.dependencies.append("RoostThreads")
}

// The modules that give or read error codes: one type, shared by the server and the SDK.
for dependent in package.targets where ["RoostHTTP", "RoostCore", "RoostClient"].contains(dependent.name) {
    dependent.dependencies.append("RoostErrorCodes")
}

#if os(macOS)
    // On a Mac without the server's floor, only the tests that need no server module are
    // declared, so `swift test` there runs the SDK's unit tests.
    if !serverOnMac {
        package.targets.removeAll { $0.type == .test && $0.name != "RoostClientUnitTests" }
    }
#endif
