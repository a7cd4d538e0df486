import Foundation
import RoostStore
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
            "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure",
            "RestartPreventExitStatus=75 64 65 78",
            "LimitNOFILE=65536", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes",
            "PrivateTmp=yes", "PrivateDevices=yes", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "CapabilityBoundingSet=", "AmbientCapabilities=",
        ] {
            #expect(lines.contains(line), "deploy/roost.service lacks \(line)")
        }
    }

    @Test(
        "the Dockerfile's runtime packages are exactly the Debian packages of the libraries roost links",
        .enabled(if: program("readelf") != nil && program("dpkg") != nil, "needs readelf and dpkg (Debian)"))
    func runtimePackagesMatchTheBinary() async throws {
        let needed = try await runProgram(
            try #require(Self.program("readelf")), ["-d", try RoostProcess.binaryPath()])
        let libraries = needed.output.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["),
                let close = line.lastIndex(of: "]")
            else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        var packages: Set<String> = []
        for library in libraries {
            // Swift's own runtime libraries are in a debug build's binary's list, and no package's.
            let owner = try await runProgram(try #require(Self.program("dpkg")), ["-S", "*/\(library)"])
            guard owner.status == 0, let first = owner.output.split(separator: "\n").first,
                let name = first.split(separator: ":").first
            else { continue }
            packages.insert(String(name))
        }
        let dockerfile = try Self.text("deploy/Dockerfile")
        let runtime = try #require(dockerfile.components(separatedBy: "FROM debian:bookworm-slim").last)
        let install = try #require(
            runtime.components(separatedBy: "--no-install-recommends").dropFirst().first)
        let listed = Set(
            install.components(separatedBy: "&&")[0].split(whereSeparator: { " \\\n".contains($0) }).map(
                String.init))
        // The base image brings glibc; apt itself needs it.
        #expect(packages.subtracting(["libc6"]) == listed, "roost links \(packages.sorted())")
    }

    @Test("every way roost serve fails that a restart cannot fix is in RestartPreventExitStatus")
    func permanentFailuresAreNotRestarted() async throws {
        let unit = try Self.text("deploy/roost.service")
        let line = try #require(
            unit.split(separator: "\n").first { $0.hasPrefix("RestartPreventExitStatus=") })
        let prevented = Set(
            line.dropFirst("RestartPreventExitStatus=".count).split(separator: " ").map { Int32($0) })
        let directory = try await makeDataFolder()
        let badApp = directory + "-bad.json"
        try Data(#"{"collections": 7}"#.utf8).write(to: URL(fileURLWithPath: badApp))
        let held = try RoostProcess(dataDirectory: directory)
        for (why, arguments) in [
            ("a bad option", ["--no-such-option"]), ("a bad app definition", ["--app", badApp]),
            (
                "a missing TLS certificate",
                ["--tls-cert", directory + "/none.pem", "--tls-key", directory + "/none.key"]
            ),
            (
                "a push key file that is not a key",
                [
                    "--apns-key-file", badApp, "--apns-key-id", "KEY1234567", "--apns-team-id", "TEAM123456",
                ]
            ),
        ] {
            let other = try await makeDataFolder()
            let result = try await runRoost(["serve", "--port", "0", "--data-dir", other] + arguments)
            #expect(result.status != 0 && prevented.contains(result.status), "\(why): exit \(result.status)")
        }
        let second = try await runRoost(["serve", "--port", "0", "--data-dir", directory])
        #expect(prevented.contains(second.status), "a data folder in use: exit \(second.status)")
        #expect(try await held.stop(signal: SIGTERM) == 0)
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
        // Which packages: runtimePackagesMatchTheBinary; here, that apt knows each name.
        #expect(packages.contains("libsqlite3-0"))
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

    @Test(
        "scripts/release.sh packs a snapshot: named by version and commit, checksummed, the same bytes twice, its binary runs"
    )
    func releaseSnapshot() async throws {
        let script = Self.root.appendingPathComponent("scripts/release.sh").path
        let binary = try RoostProcess.binaryPath()
        let output = TestServer.makeTemporaryDirectory()
        let first = try await runProgram(script, ["--snapshot", "--binary", binary, "--output", output])
        #expect(first.status == 0, "\(first.errorOutput)")
        let commit = try await runProgram(
            "/usr/bin/git", ["-C", Self.root.path, "rev-parse", "--short=12", "HEAD"])
        let arch = try await runProgram("/usr/bin/uname", ["-m"])
        let name =
            "roost-\(RoostRelease.version)-dev.\(commit.output.trimmingCharacters(in: .whitespacesAndNewlines))"
        let archive = "\(name)-linux-\(arch.output.trimmingCharacters(in: .whitespacesAndNewlines)).tar.gz"
        #expect(first.output.hasPrefix("release: \(output)/\(archive) ("), "\(first.output)")
        let sums = try String(contentsOfFile: output + "/SHA256SUMS", encoding: .utf8)
        #expect(sums.hasSuffix("  \(archive)\n"))
        let check = try await runProgram("/bin/sh", ["-c", "cd '\(output)' && sha256sum -c SHA256SUMS"])
        #expect(check.status == 0, "\(check.output)\(check.errorOutput)")
        let listing = try await runProgram("/bin/tar", ["-tzf", output + "/" + archive])
        let entries = Set(listing.output.split(separator: "\n").map(String.init))
        for entry in [
            "bin/roost", "deploy/roost.service", "deploy/roost.env", "README.md", "LICENSE", "CHANGELOG.md",
            "docs/running.md",
        ] {
            #expect(entries.contains("\(name)/\(entry)"), "\(entry)")
        }
        // The same commit and binary give the same bytes.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output + "/" + archive))
        let again = try await runProgram(script, ["--snapshot", "--binary", binary, "--output", output])
        #expect(again.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output + "/" + archive)) == bytes)
        let unpacked = TestServer.makeTemporaryDirectory()
        #expect(
            try await runProgram("/bin/tar", ["-xzf", output + "/" + archive, "-C", unpacked]).status == 0)
        let version = try await runProgram(unpacked + "/\(name)/bin/roost", ["version"])
        #expect(version.output.hasPrefix("roost \(RoostRelease.version) "))
    }

    @Test("scripts/release.sh packs the commit's files: an untracked or edited file in docs/ stays out")
    func releasePacksTheCommit() async throws {
        let clone = TestServer.makeTemporaryDirectory() + "/roost"
        let cloned = try await runProgram(
            "/usr/bin/git", ["clone", "--quiet", "--local", Self.root.path, clone])
        #expect(cloned.status == 0, "\(cloned.errorOutput)")
        // The script under test, not the one of the last commit.
        try FileManager.default.removeItem(atPath: clone + "/scripts/release.sh")
        try FileManager.default.copyItem(
            atPath: Self.root.appendingPathComponent("scripts/release.sh").path,
            toPath: clone + "/scripts/release.sh")
        try "a draft with a password: hunter2\n".write(
            toFile: clone + "/docs/draft-notes.md", atomically: true, encoding: .utf8)
        let running = try String(contentsOfFile: clone + "/docs/running.md", encoding: .utf8)
        try (running + "\nan edit not committed\n").write(
            toFile: clone + "/docs/running.md", atomically: true, encoding: .utf8)
        let output = TestServer.makeTemporaryDirectory()
        let packed = try await runProgram(
            clone + "/scripts/release.sh",
            ["--snapshot", "--binary", try RoostProcess.binaryPath(), "--output", output])
        #expect(packed.status == 0, "\(packed.errorOutput)")
        let archive = try #require(
            try FileManager.default.contentsOfDirectory(atPath: output).first { $0.hasSuffix(".tar.gz") })
        let listing = try await runProgram("/bin/tar", ["-tzf", output + "/" + archive])
        let docs = listing.output.split(separator: "\n").filter {
            $0.contains("/docs/") && !$0.hasSuffix("/")
        }
        let tracked = try await runProgram("/usr/bin/git", ["-C", clone, "ls-files", "docs"])
        #expect(docs.count == tracked.output.split(separator: "\n").count, "\(docs)")
        #expect(!docs.contains { $0.hasSuffix("/docs/draft-notes.md") })
        let unpacked = TestServer.makeTemporaryDirectory()
        #expect(
            try await runProgram("/bin/tar", ["-xzf", output + "/" + archive, "-C", unpacked]).status == 0)
        #expect(!listing.output.contains("draft-notes"))
        let packedRunning = try await runProgram(
            "/bin/sh", ["-c", "cat '\(unpacked)'/*/docs/running.md"])
        #expect(packedRunning.output == running, "the committed running.md, not the edited one")
    }

    @Test(
        "scripts/release.sh refuses a binary of another version, unknown options, and a release off its tag")
    func releaseRefusals() async throws {
        let script = Self.root.appendingPathComponent("scripts/release.sh").path
        let output = TestServer.makeTemporaryDirectory()
        let impostor = output + "/roost"
        try "#!/bin/sh\necho 'roost 9.9.9 (commit x)'\n".write(
            toFile: impostor, atomically: true, encoding: .utf8)
        chmod(impostor, 0o755)
        let other = try await runProgram(script, ["--snapshot", "--binary", impostor, "--output", output])
        #expect(other.status == 65)
        #expect(
            other.errorOutput
                == "release: \(impostor) reports 'roost 9.9.9 (commit x)', not version \(RoostRelease.version)\n"
        )
        let unknown = try await runProgram(script, ["--bogus"])
        #expect(unknown.status == 64)
        #expect(unknown.errorOutput.hasPrefix("release: unknown option '--bogus'\n"))
        // Off the tag (or with changes), a release is refused before anything is built.
        let tag = try await runProgram(
            "/usr/bin/git", ["-C", Self.root.path, "describe", "--exact-match", "--tags", "HEAD"])
        if tag.output.trimmingCharacters(in: .whitespacesAndNewlines) != "v\(RoostRelease.version)" {
            let refused = try await runProgram(script, ["--output", output])
            #expect(refused.status == 65)
            #expect(refused.errorOutput.hasPrefix("release: "))
            #expect(refused.errorOutput.hasSuffix("or use --snapshot\n"), "\(refused.errorOutput)")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: output) == ["roost"], "nothing was packed")
    }
}
