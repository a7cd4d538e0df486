import CDuktape
import RoostJSON

#if canImport(Glibc)
    import Glibc
#endif

/// One Duktape heap with the prelude installed, its allocation account and its host hooks.
/// Every entry into JavaScript goes through the shim's protected calls, so no JavaScript error
/// ever unwinds through a Swift frame.
final class ScriptHeap {
    private let context: OpaquePointer
    private let host: UnsafeMutablePointer<roost_duk_host>

    /// Why a heap could not be made: the engine refused, or the prelude did not run (usually the
    /// memory limit).
    struct CreationError: Error {
        let message: String
    }

    /// A heap capped at `memoryLimit` bytes whose scripts may `require` the given module ids;
    /// `owner` and `callback` answer the scripts' host requests.
    init(
        memoryLimit: Int, moduleIds: [String], owner: UnsafeMutableRawPointer,
        callback: roost_duk_host_callback
    ) throws(CreationError) {
        host = UnsafeMutablePointer<roost_duk_host>.allocate(capacity: 1)
        // Duktape's own start-up does not survive a refused allocation (it aborts or crashes), so
        // the cap applies once the environment is in place.
        host.initialize(
            to: roost_duk_host(used: 0, limit: 0, refused: 0, callback: callback, owner: owner, pending: nil))
        guard let created = roost_duk_create_heap(host) else {
            host.deallocate()
            throw CreationError(
                message: "the JavaScript heap could not be created within \(memoryLimit) bytes")
        }
        context = created
        let idsJSON = JSONText.array(of: moduleIds)
        let failure = Self.protected(context) { context, answer, answerLength in
            Array(scriptPrelude.utf8).withUnsafeBufferPointer { prelude in
                idsJSON.withUnsafeBufferPointer { ids in
                    "roost:prelude".withCString { fileName in
                        var source = roost_duk_source(
                            text: UnsafeRawPointer(prelude.baseAddress!).assumingMemoryBound(to: CChar.self),
                            length: prelude.count, file_name: fileName,
                            argument: UnsafeRawPointer(ids.baseAddress!).assumingMemoryBound(to: CChar.self),
                            argument_length: ids.count)
                        return roost_duk_install(context, &source, answer, answerLength)
                    }
                }
            }
        }
        if let failure = failure.error {
            throw CreationError(message: "the script environment could not be set up: \(failure)")
        }
        guard host.pointee.used < memoryLimit else {
            throw CreationError(
                message:
                    "the script environment takes \(host.pointee.used) bytes, not under the memory limit of \(memoryLimit) bytes"
            )
        }
        host.pointee.limit = memoryLimit
    }

    deinit {
        duk_destroy_heap(context)
        roost_duk_host_release(host)
        host.deallocate()
    }

    /// Whether an allocation was refused for the memory limit since the flag was last cleared.
    var refusedAllocation: Bool {
        get { host.pointee.refused != 0 }
        set { host.pointee.refused = newValue ? 1 : 0 }
    }

    /// Bytes the heap holds now.
    var usedBytes: Int { host.pointee.used }

    /// Calls the prelude's driver: its string answer, or the text of an error that escaped it.
    func drive(_ request: String, payload: [UInt8]) -> (answer: [UInt8], error: String?) {
        let outcome = Self.protected(context) { context, answer, answerLength in
            request.withCString { requestName in
                payload.withUnsafeBufferPointer { bytes in
                    var source = roost_duk_source(
                        text: requestName, length: 0, file_name: requestName,
                        argument: bytes.baseAddress.map {
                            UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)
                        } ?? requestName,
                        argument_length: bytes.count)
                    return roost_duk_drive(context, &source, answer, answerLength)
                }
            }
        }
        return (outcome.text, outcome.error)
    }

    /// Runs one of the shim's protected calls and takes the malloc'd text it leaves.
    private static func protected(
        _ context: OpaquePointer,
        _ body: (OpaquePointer, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, UnsafeMutablePointer<Int>)
            ->
            duk_int_t
    ) -> (text: [UInt8], error: String?) {
        var answer: UnsafeMutablePointer<CChar>? = nil
        var answerLength = 0
        let status = body(context, &answer, &answerLength)
        defer { free(answer) }
        let text = answer.map { Array(UnsafeRawBufferPointer(start: $0, count: answerLength)) } ?? []
        guard status == 0 else {
            return (text, text.isEmpty ? "Error" : String(decoding: text, as: UTF8.self))
        }
        return (text, nil)
    }
}

/// Small JSON texts built without a JSONValue round trip.
enum JSONText {
    static func array(of strings: [String]) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "[")]
        for (position, string) in strings.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(string, into: &output)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }
}
