import Foundation

/// A file write failed because the disk (or the user's quota) is full.
///
/// `detail` is for the server's log only; clients are told just that the disk is full.
public struct OutOfSpaceError: Error, Sendable, CustomStringConvertible {
    public let detail: String

    public init(_ detail: String) { self.detail = detail }

    public var description: String { "out of disk space: \(detail)" }

    /// Whether an `errno` value means the disk or the quota is full.
    public static func isOutOfSpace(errno code: Int32) -> Bool { code == ENOSPC || code == EDQUOT }
}

/// Recognises "the disk is full" in the errors of every store, so the error boundary can answer
/// 507 instead of 500 and callers can skip writes that may wait (such as renewing a token).
public enum StorageFailure {
    /// Whether `error` says the disk (or quota) under the data folder is full.
    public static func isOutOfSpace(_ error: any Error) -> Bool {
        switch error {
        case is OutOfSpaceError:
            return true
        case let error as any OutOfSpaceReporting:
            return error.isOutOfSpace
        case let error as CocoaError:
            if error.code == .fileWriteOutOfSpace { return true }
            return (error.underlying as? POSIXError).map {
                OutOfSpaceError.isOutOfSpace(errno: $0.code.rawValue)
            }
                ?? false
        case let error as POSIXError:
            return OutOfSpaceError.isOutOfSpace(errno: error.code.rawValue)
        default:
            let error = error as NSError
            return error.domain == NSPOSIXErrorDomain
                && OutOfSpaceError.isOutOfSpace(errno: Int32(error.code))
        }
    }
}

/// A driver's error that can tell whether it means the disk is full.
public protocol OutOfSpaceReporting: Error {
    var isOutOfSpace: Bool { get }
}
