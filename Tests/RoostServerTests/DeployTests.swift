import Foundation
import RoostTestSupport
import Testing

/// The files an operator installs with: the systemd unit, the Dockerfile and scripts/install.sh.
@Suite("Deployment files")
struct DeployTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A program on the PATH, or nil.
    static func program(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("the unit keeps its promises: data folder, reload, no restart on exit 75, hardening")
    func unitContents() throws {
        let lines = Set(try Self.text("deploy/roost.service").split(separator: "\n").map(String.init))
        for line in [
            "User=roost", "ExecStart=/usr/local/bin/roost serve --data-dir /var/lib/roost",
            "StateDirectory=roost", "StateDirectoryMode=0700", "EnvironmentFile=-/etc/roost/roost.env",
            "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure", "RestartPreventExitStatus=75 64 65",
            "LimitNOFILE=65536", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes",
            "PrivateTmp=yes", "PrivateDevices=yes", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "CapabilityBoundingSet=", "AmbientCapabilities=",
        ] {
            #expect(lines.contains(line), "deploy/roost.service lacks \(line)")
        }
    }

    @Test(
        "systemd-analyze verify accepts the unit",
        .enabled(
            if: program("systemd-analyze") != nil,
            "systemd-analyze is not installed (apt-get install systemd)"))
    func unitVerifies() async throws {
        // As scripts/install.sh installs it: ExecStart pointing at a binary that exists.
        let unit = TestServer.makeTemporaryDirectory() + "/roost.service"
        let text = try Self.text("deploy/roost.service").replacingOccurrences(
            of: "/usr/local/bin/roost", with: try RoostProcess.binaryPath())
        try Data(text.utf8).write(to: URL(fileURLWithPath: unit))
        let verify = try await runProgram(try #require(Self.program("systemd-analyze")), ["verify", unit])
        #expect(verify.status == 0, "\(verify.output)\(verify.errorOutput)")
        // Other units on the machine may draw warnings; none may concern this one.
        #expect(!verify.errorOutput.contains("roost.service"), "\(verify.errorOutput)")
    }

    @Test(
        "the Dockerfile's runtime packages are Debian's names",
        .enabled(if: program("apt-cache") != nil, "apt-cache is not installed: not a Debian machine"))
    func dockerfilePackages() async throws {
        let dockerfile = try Self.text("deploy/Dockerfile")
        let runtime = try #require(dockerfile.components(separatedBy: "FROM debian:bookworm-slim").last)
        let install = try #require(
            runtime.components(separatedBy: "--no-install-recommends").dropFirst().first)
        let packages = install.components(separatedBy: "&&")[0].split(whereSeparator: { " \\\n".contains($0) }
        )
        .map(String.init)
        #expect(packages == ["libevent-2.1-7", "libevent-pthreads-2.1-7", "libevent-openssl-2.1-7", "libssl3", "libsqlite3-0", "libsodium23"])
        let apt = try #require(Self.program("apt-cache"))
        guard try await runProgram(apt, ["show", "libc6"]).status == 0 else {
            print("skipped: apt-cache has no package lists here (apt-get update)")
            return
        }
        let shown = try await runProgram(apt, ["show", "--no-all-versions"] + packages)
        #expect(shown.status == 0, "\(shown.errorOutput)")
        for package in packages {
            #expect(shown.output.contains("Package: \(package)\n"), "apt-cache does not know \(package)")
        }
        #expect(dockerfile.contains("VOLUME /var/lib/roost"))
        #expect(dockerfile.contains("EXPOSE 8080"))
        #expect(dockerfile.contains(#"CMD ["serve", "--host", "0.0.0.0", "--data-dir", "/var/lib/roost"]"#))
        #expect(dockerfile.contains("\nUSER roost\n"))
    }

    @Test(
        "scripts/install.sh explains itself and refuses unknown options and odd commit names without building"
    )
    func installScriptOptions() async throws {
        let script = Self.root.appendingPathComponent("scripts/install.sh").path
        let help = try await runProgram(script, ["--help"])
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("usage: scripts/install.sh [--prefix DIR] [--systemd] [--no-deps]\n"))
        let unknown = try await runProgram(script, ["--bogus"])
        #expect(unknown.status == 64)
        #expect(unknown.errorOutput.hasPrefix("install: unknown option '--bogus'\n"))
        let noPrefix = try await runProgram(script, ["--prefix"])
        #expect(noPrefix.status == 64)
        #expect(noPrefix.errorOutput == "install: --prefix needs a folder\n")
        // The commit becomes a Swift string literal: nothing that could end it gets in.
        let quoted = try await runProgram(
            "/usr/bin/env", [#"ROOST_COMMIT=v1"; exit(1)"#, script, "--no-deps"])
        #expect(quoted.status == 65)
        #expect(quoted.errorOutput == #"install: odd commit name 'v1"; exit(1)'"# + "\n")
        #expect(
            !FileManager.default.fileExists(
                atPath: Self.root.appendingPathComponent("Sources/roost/BuildCommit.swift").path))
    }
}
