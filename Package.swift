// swift-tools-version:6.2
// Upgate: an upload stack for Qiniu-style resumable uploads (biz-server, up-server, reference client).
// No outside Swift package: the toolchain's modules plus C libraries from Debian (see scripts/bootstrap).
import PackageDescription

/// Every Swift target gets these.
let common: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]
/// Native* only: unsafe code is allowed, and each unsafe expression must be marked `unsafe`.
let native: [SwiftSetting] = common + [.strictMemorySafety()]
/// Every target outside Native*: any Unsafe*/Unmanaged use is a compile error (DESIGN.md).
let safeOnly: [SwiftSetting] = common + [
    .strictMemorySafety(),
    .treatWarning("StrictMemorySafety", as: .error),
]

let package = Package(
    name: "upgate",
    // The client products (UpCore, UpClient) also build for Apple platforms; the servers and up-cli
    // are Linux products (libmicrohttpd, libcurl, OpenSSL are Linux-only dependencies below).
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "UpCore", targets: ["UpCore"]),
        .library(name: "UpClient", targets: ["UpClient"]),
        .library(name: "BizServer", targets: ["BizServer"]),
        .library(name: "UpServer", targets: ["UpServer"]),
        .executable(name: "biz-server", targets: ["biz-server"]),
        .executable(name: "up-server", targets: ["up-server"]),
        .executable(name: "up-cli", targets: ["up-cli"]),
    ],
    targets: [
        // MARK: C modules — module.modulemap + shim.h, nothing else
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CISAL", pkgConfig: "libisal", providers: [.apt(["libisal-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // glibc's GNU extensions that Swift's Glibc module does not declare (sched_getcpu).
        .systemLibrary(name: "CLinuxExtras"),

        // MARK: Native — the only importers of C, the only users of Unsafe*
        .target(name: "NativePostgres", dependencies: ["CLibPQ", "NativeOS"], swiftSettings: native),
        // OpenSSL on Linux only: on Apple platforms NativeCrypto hashes with CryptoKit (CryptoBackend.swift).
        // CRC-32 from ISA-L on Linux (3.5x zlib's speed on every uploaded byte), zlib elsewhere.
        .target(
            name: "NativeCrypto",
            dependencies: [
                .target(name: "CLibCrypto", condition: .when(platforms: [.linux])),
                .target(name: "CISAL", condition: .when(platforms: [.linux])),
                "CZlib",
            ],
            swiftSettings: native),
        .target(
            name: "NativeOS", dependencies: [.target(name: "CLinuxExtras", condition: .when(platforms: [.linux]))],
            swiftSettings: native),
        .target(name: "NativeStore", dependencies: ["CSQLite3", "NativeOS"], swiftSettings: native),
        .target(name: "NativeHTTP", dependencies: ["CMicroHTTPD", "NativeOS"], swiftSettings: native),
        .target(name: "NativeCurl", dependencies: ["CCurl", "NativeOS"], swiftSettings: native),
        // Test-only (linked by TestSupport and test targets, never by a product): raw sockets.
        .target(name: "NativeTestSupport", swiftSettings: native),

        // MARK: Safe layers
        // JSON string escaping and integers, the one writer under the protocol core and the servers.
        .target(name: "JSONText", swiftSettings: safeOnly),
        .target(name: "Basics", dependencies: ["NativeOS", "JSONText"], swiftSettings: safeOnly),
        .target(name: "UpCore", dependencies: ["NativeCrypto", "JSONText"], swiftSettings: safeOnly),
        .target(name: "HTTPKit", dependencies: ["NativeHTTP", "NativeOS", "Basics", "JSONText"], swiftSettings: safeOnly),
        // One durable delivery machine and store role for both servers (DESIGN.md "Round 2").
        .target(name: "Outbox", dependencies: ["Basics", "NativeStore", "NativePostgres"], swiftSettings: safeOnly),
        // CurlTransport on Linux only; URLSessionTransport everywhere (the one an Apple app uses).
        .target(
            name: "HTTPTransport",
            dependencies: [.target(name: "NativeCurl", condition: .when(platforms: [.linux])), "NativeOS", "Basics"],
            swiftSettings: safeOnly),
        // The one server shell: configuration files, command line, listen/signals/drain/stop.
        .target(name: "ServerShell", dependencies: ["HTTPKit", "NativeOS", "NativePostgres", "UpCore", "Basics"], swiftSettings: safeOnly),
        .target(
            name: "BizServer",
            dependencies: [
                "UpCore", "HTTPKit", "HTTPTransport", "ServerShell", "NativeStore", "NativeOS", "NativeCrypto", "Basics",
                "Outbox", "NativePostgres", "JSONText",
            ],
            // The upload page and upgate.js (issue 13), served by WebPageController.
            resources: [.copy("Web")],
            swiftSettings: safeOnly
        ),
        .target(
            name: "UpServer",
            dependencies: [
                "UpCore", "HTTPKit", "HTTPTransport", "ServerShell", "NativeStore", "NativeOS", "NativeCrypto", "Basics",
                "Outbox", "NativePostgres", "ObjectStorage", "JSONText",
            ],
            swiftSettings: safeOnly
        ),
        .target(name: "UpClient", dependencies: ["UpCore", "HTTPTransport", "NativeOS", "Basics"], swiftSettings: safeOnly),
        // S3-compatible object stores: SigV4 signing and the client up-server's S3 blob store uses.
        .target(name: "ObjectStorage", dependencies: ["NativeCrypto", "HTTPTransport", "Basics"], swiftSettings: safeOnly),
        .target(
            name: "TestSupport",
            dependencies: [
                "HTTPKit", "HTTPTransport", "Basics", "UpCore", "UpServer", "BizServer", "Outbox", "NativeTestSupport",
            ],
            swiftSettings: safeOnly),

        // MARK: Executables — parse arguments, load Config/*.json, run
        .executableTarget(name: "biz-server", dependencies: ["BizServer", "ServerShell"], swiftSettings: safeOnly),
        .executableTarget(name: "up-server", dependencies: ["UpServer", "ServerShell"], swiftSettings: safeOnly),
        .executableTarget(
            name: "up-cli", dependencies: ["UpClient", "UpCore", "HTTPTransport", "NativeOS", "Basics", "JSONText"],
            swiftSettings: safeOnly),

        // MARK: Tests — one per module, same name + "Tests"
        .testTarget(name: "NativePostgresTests", dependencies: ["NativePostgres", "TestSupport"], swiftSettings: common),
        .testTarget(name: "NativeCryptoTests", dependencies: ["NativeCrypto"], swiftSettings: common),
        .testTarget(name: "NativeStoreTests", dependencies: ["NativeStore", "NativeOS"], swiftSettings: common),
        .testTarget(name: "NativeOSTests", dependencies: ["NativeOS"], swiftSettings: common),
        .testTarget(name: "JSONTextTests", dependencies: ["JSONText"], swiftSettings: safeOnly),
        .testTarget(name: "BasicsTests", dependencies: ["Basics", "JSONText", "TestSupport"], swiftSettings: safeOnly),
        .testTarget(
            name: "UpCoreTests",
            dependencies: ["UpCore", "TestSupport"],
            resources: [.copy("Vectors/vectors.json")],
            swiftSettings: safeOnly
        ),
        .testTarget(
            name: "OutboxTests", dependencies: ["Outbox", "Basics", "NativeStore", "NativePostgres", "TestSupport"], swiftSettings: safeOnly),
        .testTarget(
            name: "HTTPKitTests", dependencies: ["HTTPKit", "NativeHTTP", "NativeTestSupport", "TestSupport"],
            swiftSettings: safeOnly),
        .testTarget(
            name: "HTTPTransportTests", dependencies: ["HTTPTransport", "HTTPKit", "Basics", "NativeTestSupport", "TestSupport"],
            swiftSettings: safeOnly),
        .testTarget(
            name: "UpServerTests",
            dependencies: [
                "UpServer", "UpCore", "HTTPKit", "HTTPTransport", "NativeStore", "NativeOS", "NativeCrypto", "NativeHTTP", "Basics",
                "ServerShell", "TestSupport", "Outbox", "NativePostgres", "ObjectStorage",
            ],
            swiftSettings: safeOnly
        ),
        .testTarget(
            name: "UpClientTests",
            dependencies: ["UpClient", "UpCore", "HTTPTransport", "Basics", "TestSupport"],
            swiftSettings: safeOnly
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["BizServer", "UpServer", "UpClient", "UpCore", "NativeCrypto", "HTTPTransport", "Basics", "TestSupport"],
            swiftSettings: safeOnly
        ),
        .testTarget(
            name: "ServerShellTests",
            dependencies: ["ServerShell", "HTTPKit", "Basics", "TestSupport", "UpCore", "NativeCrypto", "NativeTestSupport"],
            swiftSettings: safeOnly),
        .testTarget(
            name: "ObjectStorageTests",
            dependencies: ["ObjectStorage", "HTTPTransport", "NativeCrypto", "Basics", "TestSupport"],
            resources: [.copy("Vectors")],
            swiftSettings: safeOnly
        ),
        .testTarget(
            name: "BizServerTests",
            dependencies: [
                "BizServer", "UpCore", "HTTPKit", "NativeCrypto", "NativeStore", "Basics", "ServerShell", "TestSupport", "Outbox",
                "HTTPTransport", "NativePostgres",
            ],
            swiftSettings: safeOnly
        ),
    ]
)
