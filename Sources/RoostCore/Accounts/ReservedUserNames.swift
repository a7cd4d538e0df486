/// User names nobody registers: the ones FatFractal's scripts give meaning to, and the ones that
/// pass for the app's staff. Compared case-insensitively and through look-alike letters, so
/// `System`, `ЅYSTEM` (Cyrillic Ѕ) and `ѕуѕtеm` are `system`.
public enum ReservedUserNames {
    /// Scripts treat these as FatFractal's system and anonymous users (`createdBy: "system"`,
    /// `getActiveUser().userName == "anonymous"`), and a missing value pasted into a query reads
    /// `null` or `undefined`: refused everywhere, `roost users create` too.
    static let meaningful: Set<String> = ["system", "anonymous", "null", "undefined"]
    /// Names a user would take for the app's operators: refused to registrations and scripts;
    /// an operator may still give one to an account with `roost users create`.
    static let staff: Set<String> = ["admin", "admins", "administrator", "root"]

    /// Throws the same 400 for every reserved name, whether or not an account holds it.
    static func check(_ userName: String, allowingStaffNames: Bool) throws {
        let skeleton = skeleton(userName)
        guard meaningful.contains(skeleton) || (!allowingStaffNames && staff.contains(skeleton)) else {
            return
        }
        throw RoostError(
            status: 400, code: .invalidField,
            message:
                "This userName is reserved (scripts or people would take it for the system, anonymous or the app's staff); choose another.",
            details: RoostError.details(["field": .string("userName"), "rule": .string("reserved")]))
    }

    /// Whether an existing account's name is one of the reserved ones (staff names included).
    public static func isReserved(_ userName: String) -> Bool {
        let skeleton = skeleton(userName)
        return meaningful.contains(skeleton) || staff.contains(skeleton)
    }

    /// Lower-cased, with Cyrillic and Greek letters that look like Latin ones replaced by them.
    static func skeleton(_ userName: String) -> String {
        String(
            String.UnicodeScalarView(
                userName.lowercased().unicodeScalars.map { lookAlikes[$0] ?? $0 }))
    }

    private static let lookAlikes: [Unicode.Scalar: Unicode.Scalar] = {
        let pairs: [(String, String)] = [
            // Cyrillic
            ("а", "a"), ("в", "b"), ("с", "c"), ("ԁ", "d"), ("е", "e"), ("һ", "h"), ("і", "i"),
            ("ј", "j"), ("к", "k"), ("ӏ", "l"), ("м", "m"), ("п", "n"), ("о", "o"), ("р", "p"),
            ("ԛ", "q"), ("г", "r"), ("ѕ", "s"), ("т", "t"), ("и", "u"), ("ѵ", "v"), ("ԝ", "w"),
            ("х", "x"), ("у", "y"), ("ү", "y"),
            // Greek
            ("α", "a"), ("β", "b"), ("ε", "e"), ("η", "n"), ("ι", "i"), ("κ", "k"), ("μ", "u"),
            ("ν", "v"), ("ο", "o"), ("ρ", "p"), ("τ", "t"), ("υ", "u"), ("χ", "x"), ("γ", "y"),
            // Latin look-alikes a lower-casing keeps
            ("ı", "i"), ("ȷ", "j"),
        ]
        return Dictionary(
            uniqueKeysWithValues: pairs.map { ($0.0.unicodeScalars.first!, $0.1.unicodeScalars.first!) })
    }()
}
