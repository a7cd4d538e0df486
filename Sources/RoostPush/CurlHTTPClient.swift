import CCurl
import RoostThreads
import Synchronization

/// One HTTP request for ``CurlHTTPClient``.
public struct HTTPClientRequest: Sendable {
    public var url: String
    /// `name: value` lines.
    public var headers: [String]
    public var body: [UInt8]
    /// The whole request's bound, connecting included.
    public var timeoutMilliseconds: Int
    /// `POST` (with ``body``) or `GET` (without).
    public var method: String

    public init(
        url: String, headers: [String], body: [UInt8], timeoutMilliseconds: Int, method: String = "POST"
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

public struct HTTPClientResponse: Sendable {
    public var status: Int
    /// Header names lowercased; the last value of a repeated name.
    public var headers: [String: String]
    public var body: [UInt8]
}

public enum HTTPClientError: Error, Sendable, Equatable {
    /// No answer within the request's timeout.
    case timedOut
    /// The connection failed or was lost (curl's message).
    case transport(String)
    /// More requests are waiting or in flight than the client accepts.
    case overloaded
    /// ``CurlHTTPClient/shutdown()`` was called.
    case shutDown
}

/// HTTP POSTs over long-lived, multiplexed HTTP/2 connections: one libcurl multi handle driven by
/// one thread of its own, at most one connection per host. Callers hand requests over through a
/// queue (waking the thread with `curl_multi_wakeup`) and are resumed by a continuation, so no
/// Swift thread ever blocks on the network.
public final class CurlHTTPClient: Sendable {
    public struct Options: Sendable {
        /// A CA bundle to trust instead of the system's (the tests' throwaway CA).
        public var caFile: String?
        /// Requests waiting or in flight beyond which ``post(_:)`` fails at once with `.overloaded`.
        public var maximumPending: Int
        public var connectTimeoutMilliseconds: Int

        public init(
            caFile: String? = nil, maximumPending: Int = 1000, connectTimeoutMilliseconds: Int = 10_000
        ) {
            self.caFile = caFile
            self.maximumPending = maximumPending
            self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        }
    }

    private let loop: TransferLoop
    private let thread: OwnedThread

    public init(name: String, options: Options = Options()) {
        let loop = TransferLoop(options: options)
        self.loop = loop
        thread = OwnedThread(name: name) { _ in loop.run() }
    }

    /// Connections opened so far (curl's `CURLINFO_NUM_CONNECTS` summed over transfers).
    public var connectionsOpened: Int { loop.connectionsOpened.load(ordering: .relaxed) }

    /// Requests waiting or in flight.
    public var pending: Int { loop.state.withLock { $0.pending } }

    /// Sends `request`, a GET or a POST (the name is older than GETs).
    public func post(_ request: HTTPClientRequest) async -> Result<HTTPClientResponse, HTTPClientError> {
        await withCheckedContinuation { continuation in
            loop.enqueue(TransferLoop.Job(request: request, continuation: continuation))
        }
    }

    /// Answers every waiting and in-flight request `.shutDown`, closes the connections and joins
    /// the thread. Later posts answer `.shutDown` at once.
    public func shutdown() async {
        loop.stop()
        await thread.join()
    }
}

/// The multi handle and its transfers. `multi` and `active` are touched only by the loop thread
/// (`run`); other threads only lock `state` and call `curl_multi_wakeup`, which libcurl allows from
/// any thread: hence `@unchecked Sendable`.
final class TransferLoop: @unchecked Sendable {
    struct Job: Sendable {
        var request: HTTPClientRequest
        var continuation: CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>
    }
    struct State {
        var queue: [Job] = []
        var pending = 0
        var stopping = false
        /// The multi handle is cleaned up: no more wakeups.
        var closed = false
    }

    let state = Mutex(State())
    let connectionsOpened = Atomic<Int>(0)
    private let options: CurlHTTPClient.Options
    private let multi: UnsafeMutableRawPointer
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]

    private static let globalInit: Void = { curl_global_init(roost_curl_global_default()) }()

    init(options: CurlHTTPClient.Options) {
        _ = Self.globalInit
        self.options = options
        multi = curl_multi_init()
        roost_curl_multi_set_long(multi, CURLMOPT_PIPELINING, roost_curl_pipe_multiplex())
        // One connection per host, every request a stream on it (curl queues beyond the
        // server's SETTINGS_MAX_CONCURRENT_STREAMS instead of opening more connections).
        roost_curl_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1)
        roost_curl_multi_set_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000)
    }

    func enqueue(_ job: Job) {
        // Woken under the lock, so the loop cannot clean the handle up in between.
        let refusal: HTTPClientError? = state.withLock { state in
            if state.stopping { return .shutDown }
            if state.pending >= options.maximumPending { return .overloaded }
            state.pending += 1
            state.queue.append(job)
            curl_multi_wakeup(multi)
            return nil
        }
        if let refusal { job.continuation.resume(returning: .failure(refusal)) }
    }

    func stop() {
        state.withLock { state in
            state.stopping = true
            if !state.closed { curl_multi_wakeup(multi) }
        }
    }

    /// The thread's body: start what was queued, let curl work, finish what is done, sleep in
    /// `curl_multi_poll` until a socket, a timer or a wakeup.
    func run() {
        var running: Int32 = 0
        while true {
            let (jobs, stopping) = state.withLock { state in
                defer { state.queue = [] }
                return (state.queue, state.stopping)
            }
            if stopping {
                for job in jobs { job.continuation.resume(returning: .failure(.shutDown)) }
                for easy in Array(active.keys) { finish(easy, with: .failure(.shutDown)) }
                break
            }
            for job in jobs { start(job) }
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else {
                    continue
                }
                let code = message.pointee.data.result
                finish(easy, with: code == CURLE_OK ? .success(()) : .failure(error(for: code, easy: easy)))
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        state.withLock { $0.closed = true }
        curl_multi_cleanup(multi)
    }

    private func start(_ job: Job) {
        guard let easy = curl_easy_init() else {
            complete(job.continuation, .failure(.transport("curl_easy_init failed")))
            return
        }
        let transfer = Transfer(continuation: job.continuation)
        let request = job.request
        roost_curl_easy_set_string(easy, CURLOPT_URL, request.url)
        roost_curl_easy_set_long(easy, CURLOPT_HTTP_VERSION, roost_curl_http_version_2tls())
        // Wait for the connection being set up rather than opening another one beside it.
        roost_curl_easy_set_long(easy, CURLOPT_PIPEWAIT, 1)
        roost_curl_easy_set_long(easy, CURLOPT_NOSIGNAL, 1)
        roost_curl_easy_set_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        // Providers want the connection kept: reuse it for up to an hour of idleness.
        roost_curl_easy_set_long(easy, CURLOPT_MAXAGE_CONN, 3600)
        roost_curl_easy_set_long(easy, CURLOPT_TIMEOUT_MS, request.timeoutMilliseconds)
        roost_curl_easy_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeoutMilliseconds)
        if let caFile = options.caFile { roost_curl_easy_set_string(easy, CURLOPT_CAINFO, caFile) }
        if request.method == "GET" {
            roost_curl_easy_set_long(easy, CURLOPT_HTTPGET, 1)
        } else {
            roost_curl_easy_set_long(easy, CURLOPT_POSTFIELDSIZE, request.body.count)
            request.body.withUnsafeBytes { bytes in
                _ = roost_curl_easy_set_pointer(
                    easy, CURLOPT_COPYPOSTFIELDS,
                    UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
        }
        for line in request.headers { transfer.headerList = curl_slist_append(transfer.headerList, line) }
        roost_curl_easy_set_headers(easy, transfer.headerList)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        roost_curl_easy_set_callback(easy, CURLOPT_WRITEFUNCTION, receiveBody)
        roost_curl_easy_set_pointer(easy, CURLOPT_WRITEDATA, context)
        roost_curl_easy_set_callback(easy, CURLOPT_HEADERFUNCTION, receiveHeader)
        roost_curl_easy_set_pointer(easy, CURLOPT_HEADERDATA, context)
        transfer.errorBuffer.withUnsafeMutableBufferPointer { buffer in
            _ = roost_curl_easy_set_pointer(easy, CURLOPT_ERRORBUFFER, buffer.baseAddress)
        }
        active[easy] = transfer
        curl_multi_add_handle(multi, easy)
    }

    private func finish(_ easy: UnsafeMutableRawPointer, with result: Result<Void, HTTPClientError>) {
        guard let transfer = active.removeValue(forKey: easy) else { return }
        var connects = 0
        roost_curl_easy_get_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        connectionsOpened.add(connects, ordering: .relaxed)
        var status = 0
        roost_curl_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
        curl_multi_remove_handle(multi, easy)
        curl_easy_cleanup(easy)
        curl_slist_free_all(transfer.headerList)
        complete(
            transfer.continuation,
            result.map { HTTPClientResponse(status: status, headers: transfer.headers, body: transfer.body) })
    }

    private func complete(
        _ continuation: CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>,
        _ result: Result<HTTPClientResponse, HTTPClientError>
    ) {
        state.withLock { $0.pending -= 1 }
        continuation.resume(returning: result)
    }

    private func error(for code: CURLcode, easy: UnsafeMutableRawPointer) -> HTTPClientError {
        if code == CURLE_OPERATION_TIMEDOUT { return .timedOut }
        let detail =
            active[easy].map { transfer in
                String(
                    decoding: transfer.errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                    as: UTF8.self)
            } ?? ""
        return .transport(detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
    }
}

/// What one request accumulates; lives in `TransferLoop.active` until its handle is done.
private final class Transfer {
    let continuation: CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>
    var headerList: UnsafeMutablePointer<curl_slist>?
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE))

    init(continuation: CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>) {
        self.continuation = continuation
    }
}

/// Providers answer a few hundred bytes (a key set a few KiB); more than this is not theirs.
public let maximumResponseBody = 64 * 1024

private let receiveBody: roost_curl_data_callback = { data, size, count, context in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    guard transfer.body.count + length <= maximumResponseBody else { return 0 }
    transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
    return length
}

private let receiveHeader: roost_curl_data_callback = { data, size, count, context in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
        transfer.headers[name] = value
    }
    return length
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        var slice = Substring(self)
        while let first = slice.first, characters.contains(first) { slice.removeFirst() }
        while let last = slice.last, characters.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
