import Foundation
import RoostJSON

/// What a user name, an email and a password must be.
extension AccountService {
    /// The longest user name, in characters and in UTF-8 bytes: a letter with thousands of
    /// combining marks is one character.
    static let maximumUserNameCharacters = 64
    static let maximumUserNameBytes = 256
    /// The longest address (RFC 5321's path less its brackets), as an email or a user name.
    static let maximumEmailBytes = 254

    /// The user name in NFC, so that a name typed composed or decomposed is the same account;
    /// refuses names a person could not tell from another's (see docs/accounts.md). A name with
    /// `@` must be an e-mail address (FatFractal apps name users so), up to 254 bytes.
    static func normalizedUserName(_ raw: String) throws -> String {
        let name = raw.precomposedStringWithCanonicalMapping
        let isAddress = name.contains("@")
        if isAddress {
            guard name.utf8.count <= maximumEmailBytes else {
                throw invalidUserName(
                    "length",
                    "A userName that is an e-mail address has at most \(maximumEmailBytes) bytes of UTF-8.")
            }
            try checkAddressShape(name)
        } else {
            guard !name.isEmpty, name.count <= maximumUserNameCharacters,
                name.utf8.count <= maximumUserNameBytes
            else {
                throw invalidUserName(
                    "length",
                    "A userName is 1 to \(maximumUserNameCharacters) characters and at most \(maximumUserNameBytes) bytes of UTF-8."
                )
            }
        }
        let punctuation = isAddress ? "._-+@".unicodeScalars : "._-+".unicodeScalars
        var previous: Unicode.Scalar?
        for scalar in name.unicodeScalars {
            if isMark(scalar) {
                // A mark must follow a letter or digit: a name is never only marks.
                guard let previous, !punctuation.contains(previous) else {
                    throw invalidUserName(
                        "combining_mark",
                        "A userName may not start with a combining mark or put one after '.', '_', '-' or '+'."
                    )
                }
            } else if !(scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                || punctuation.contains(scalar))
            {
                throw invalidUserName(
                    "characters",
                    "A userName is letters, digits, '.', '_', '-' or '+', or an e-mail address of those (no spaces, no control or format characters)."
                )
            }
            previous = scalar
        }
        // Fullwidth letters, ligatures, superscripts: look like plain letters of another name.
        guard name.precomposedStringWithCompatibilityMapping == name else {
            throw invalidUserName(
                "compatibility_characters",
                "A userName may not use fullwidth letters, ligatures or other compatibility characters; type the plain letters."
            )
        }
        guard Set(name.unicodeScalars.compactMap(confusableScript)).count <= 1 else {
            throw invalidUserName(
                "mixed_scripts",
                "A userName may not mix Latin, Greek, Cyrillic, Armenian or Cherokee letters, whose look-alikes could pass for another name."
            )
        }
        return name
    }

    /// One `@`, something before it, and a domain of dotted labels after it.
    private static func checkAddressShape(_ name: String) throws {
        let parts = name.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty,
            case let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false),
            labels.count >= 2, labels.allSatisfy({ !$0.isEmpty })
        else {
            throw invalidUserName(
                "address",
                "A userName with '@' must be an e-mail address such as grace@example.com: one '@', a name before it and a domain with a dot after it."
            )
        }
    }

    /// A user name that is an address is the account's email as well, so that a login by that
    /// address can only ever mean this account: the email sent, if any, must be the same address.
    static func email(in body: JSONObject, userName: String) throws -> String? {
        let email = try email(in: body)
        guard userName.contains("@") else { return email }
        if let email, email.lowercased() != userName.lowercased() {
            throw invalidUserName(
                "email_mismatch",
                "A userName that is an e-mail address is the account's email as well: leave email out or send the same address."
            )
        }
        return email ?? userName
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    /// Scripts whose letters have look-alikes in one another (Latin `a`, Cyrillic `а`, Greek `ο`).
    private enum ConfusableScript { case latin, greek, cyrillic, armenian, cherokee }

    private static func confusableScript(_ scalar: Unicode.Scalar) -> ConfusableScript? {
        guard scalar.properties.isAlphabetic, !isMark(scalar) else { return nil }
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0xAA, 0xBA, 0xC0...0x24F, 0x250...0x2AF, 0x1D00...0x1DBF,
            0x1E00...0x1EFF, 0x2C60...0x2C7F, 0xA720...0xA7FF, 0xAB30...0xAB6F:
            return .latin
        case 0x370...0x3FF, 0x1F00...0x1FFF: return .greek
        case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F: return .cyrillic
        case 0x530...0x58F: return .armenian
        case 0x13A0...0x13FF, 0xAB70...0xABBF: return .cherokee
        default: return nil
        }
    }

    private static func invalidUserName(_ rule: String, _ message: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidField, message: message,
            details: RoostError.details(["field": .string("userName"), "rule": .string(rule)]))
    }

    static func email(in body: JSONObject) throws -> String? {
        guard let value = body["email"], value != .null else { return nil }
        guard let email = value.stringValue?.precomposedStringWithCanonicalMapping,
            email.utf8.count <= maximumEmailBytes,
            !email.contains(" "),
            let at = email.firstIndex(of: "@"), at != email.startIndex,
            email[email.index(after: at)...].contains(".")
        else { throw RoostError.invalidField("email", "email must look like name@example.com.") }
        return email
    }

    /// NIST SP 800-63B's rules: a length, not a composition rule; and not a password attackers
    /// try first (a common one, one character repeated, only spaces, the user's own name).
    static func validate(password: String, userName: String) throws {
        guard password.count >= 8 else {
            throw RoostError.weakPassword(
                "min_length", message: "The password must have at least 8 characters.")
        }
        guard password.utf8.count <= 1024 else {
            throw RoostError.weakPassword("max_length", message: "The password must have at most 1024 bytes.")
        }
        guard !password.allSatisfy(\.isWhitespace) else {
            throw RoostError.weakPassword(
                "whitespace_only", message: "The password must not be only spaces or other blank characters.")
        }
        guard Set(password).count > 1 else {
            throw RoostError.weakPassword(
                "repeated_character", message: "The password must not be one character repeated.")
        }
        guard password.lowercased() != userName.lowercased() else {
            throw RoostError.weakPassword("not_user_name", message: "The password must not be the user name.")
        }
        guard !CommonPasswords.contains(password) else {
            throw RoostError.weakPassword(
                "common",
                message:
                    "The password is one of the 10,000 most common ones that attackers try first; choose another, such as a few unrelated words."
            )
        }
    }
}
