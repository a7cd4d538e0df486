/// Facts about the build, for `roost version`.
///
/// `scripts/install.sh` writes `BuildCommit.swift` beside this file for the length of its build
/// (git ignores it; the script deletes it afterwards): `extension BuildInfo { static var commit:
/// String? { "<commit>" } }`. A member declared on the type itself wins over this protocol's
/// default, so a plain `swift build` compiles and says "unknown", and no build reads git at run time.
enum BuildInfo: BuildInfoDefaults {}

protocol BuildInfoDefaults {}

extension BuildInfoDefaults {
    /// The git commit (`git describe --always --dirty`) the binary was built from, when known.
    static var commit: String? { nil }
}
