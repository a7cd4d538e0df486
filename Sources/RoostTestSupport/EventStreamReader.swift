import Foundation

/// One Server-Sent Event as a browser's EventSource dispatches it.
public struct ServerSentEvent: Sendable, Equatable {
    public var id: String?
    public var type: String
    public var data: String

    /// The data parsed as a JSON object, or an empty dictionary.
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
    }

    /// The `guid` of the object in the data.
    public var guid: String? { json["guid"] as? String }
}

/// A small Server-Sent Events client for tests: opens a stream over a ``RawConnection`` and
/// parses what arrives as EventSource does (comments, `id:` without data, multi-line data).
public final class EventStreamReader: @unchecked Sendable {
    // @unchecked Sendable: a test reads a stream from one task at a time.
    public let connection: RawConnection
    /// The response head (its body, when the answer is not a stream).
    public let response: TestResponse
    /// Comment lines received, without their colon.
    public private(set) var comments: [String] = []
    /// The last `id:` received, as an EventSource keeps it.
    public private(set) var lastEventID: String?
    /// Every `id:` received (with an event or alone), in order.
    public private(set) var receivedIDs: [String] = []
    private var unread: [UInt8] = []
    private var events: [ServerSentEvent] = []
    private var fields = (id: String?.none, type: "", data: [String]())
    /// The server closed the stream.
    public private(set) var ended = false

    /// Sends `GET path` and reads the head; a non-200 answer is read whole.
    public init(port: Int, path: String, headers: [(String, String)] = [], timeout: Double = 30) async throws
    {
        let connection = try RawConnection(port: port, timeout: timeout)
        self.connection = connection
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        connection.send(head + "\r\n")
        let peek = try await offCooperativePool { try connection.readResponse(head: true) }
        if peek.status == 200 {
            response = peek
        } else {
            let length = peek.header("Content-Length").flatMap(Int.init) ?? 0
            var body: [UInt8] = []
            while body.count < length,
                let chunk = try await offCooperativePool({ try connection.receiveChunk() })
            {
                body += chunk
            }
            response = TestResponse(status: peek.status, headers: peek.headers, body: body)
        }
    }

    /// The status of the answer.
    public var status: Int { response.status }

    /// The next event; nil when the stream ended first.
    public func next() async throws -> ServerSentEvent? {
        while events.isEmpty {
            guard try await receive() else { return nil }
        }
        return events.removeFirst()
    }

    /// The next `count` events (fewer when the stream ends).
    public func next(_ count: Int) async throws -> [ServerSentEvent] {
        var received: [ServerSentEvent] = []
        while received.count < count, let event = try await next() { received.append(event) }
        return received
    }

    /// Reads until a comment containing `text` arrives; false when the stream ended first.
    public func waitForComment(containing text: String) async throws -> Bool {
        var checked = 0
        while true {
            if comments[checked...].contains(where: { $0.contains(text) }) { return true }
            checked = comments.count
            guard try await receive() else { return false }
        }
    }

    /// Reads until the last event id is `id`; false when the stream ended first.
    public func waitForLastEventID(_ id: String) async throws -> Bool {
        while lastEventID != id {
            guard try await receive() else { return false }
        }
        return true
    }

    /// Reads everything up to the end of the stream; the events that were still to come.
    public func readToEnd() async throws -> [ServerSentEvent] {
        while try await receive() {}
        defer { events = [] }
        return events
    }

    /// Reads one chunk and parses it; false once the stream has ended.
    private func receive() async throws -> Bool {
        guard !ended else { return false }
        let connection = self.connection
        guard let chunk = try await offCooperativePool({ try connection.receiveChunk() }) else {
            ended = true
            return false
        }
        // Only the new bytes are searched for a line's end: an event of megabytes arrives in
        // hundreds of chunks, and searching from the start each time would be quadratic.
        var searchFrom = unread.count
        unread += chunk
        var lineStart = 0
        while let newline = unread[searchFrom...].firstIndex(of: 0x0A) {
            parse(String(decoding: unread[lineStart..<newline], as: UTF8.self))
            lineStart = newline + 1
            searchFrom = lineStart
        }
        if lineStart > 0 { unread.removeFirst(lineStart) }
        return true
    }

    private func parse(_ line: String) {
        if line.isEmpty {
            if let id = fields.id {
                lastEventID = id
                receivedIDs.append(id)
            }
            if !fields.data.isEmpty {
                events.append(
                    ServerSentEvent(
                        id: fields.id ?? lastEventID, type: fields.type.isEmpty ? "message" : fields.type,
                        data: fields.data.joined(separator: "\n")))
            }
            fields = (nil, "", [])
            return
        }
        if line.hasPrefix(":") {
            comments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
            return
        }
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var value = parts.count > 1 ? String(parts[1]) : ""
        if value.hasPrefix(" ") { value.removeFirst() }
        switch parts[0] {
        case "id": fields.id = value
        case "event": fields.type = value
        case "data": fields.data.append(value)
        default: break
        }
    }
}
