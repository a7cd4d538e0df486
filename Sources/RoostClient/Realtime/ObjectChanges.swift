import Foundation

/// One change the server's realtime feed reported for a subscription.
///
/// ```swift
/// for try await change in client.changes(of: client.query(Todo.self).where("done", .eq, false)) {
///     switch change.kind {
///     case .created(let todo), .entered(let todo), .updated(let todo): show(todo)
///     case .deleted(let guid), .left(let guid): hide(guid)
///     case .reset: await reloadEverything()
///     }
/// }
/// ```
public struct ObjectChange<Model: RoostModel>: Sendable {
    /// What happened.
    public enum Kind: Sendable {
        /// An object was created (and matches the subscription).
        case created(Stored<Model>)
        /// An object the subscription saw changed, and still matches.
        case updated(Stored<Model>)
        /// An update made an object match the subscription's query (or readable to the user).
        case entered(Stored<Model>)
        /// An update made an object stop matching the query, or the user lost read access.
        case left(guid: String)
        /// An object the user could see was deleted.
        case deleted(guid: String)
        /// The position resumed from is older than the server's change log keeps: changes were
        /// missed. Fetch what the app shows again; changes after this one follow as usual.
        case reset
    }

    /// What happened.
    public let kind: Kind
    /// The change's position in the server's change log. Keep the last one (for example in
    /// `UserDefaults`) and pass it as `after:` on the next launch to hear of what happened since.
    public let position: Int64

    /// The changed object's guid; nil for ``Kind/reset``.
    public var guid: String? {
        switch kind {
        case .created(let object), .updated(let object), .entered(let object): object.guid
        case .left(let guid), .deleted(let guid): guid
        case .reset: nil
        }
    }

    /// The object as it is now, for created, updated and entered.
    public var object: Stored<Model>? {
        switch kind {
        case .created(let object), .updated(let object), .entered(let object): object
        case .left, .deleted, .reset: nil
        }
    }
}

/// Changes of a collection, one object or a query, as an `AsyncSequence` that reconnects by
/// itself and stops (closing its connection) when the loop stops.
public typealias ObjectChanges<Model: RoostModel> = AsyncThrowingStream<ObjectChange<Model>, any Error>

extension Roost {
    /// Every change to `Model`'s collection the user may see, from now on (or after `position`,
    /// a ``ObjectChange/position`` kept from an earlier run).
    ///
    /// The sequence reads the server's event stream (`GET /ff/events`) with the client's token.
    /// When the connection drops it reconnects with backoff and resumes after the last position
    /// it delivered, so no change is lost or repeated. It ends by throwing a ``RoostError`` when
    /// the server refuses the subscription (a bad query), the token expires or is revoked
    /// (`invalid_token`; the login handler is asked first), or the user logs out or changes.
    /// Ending the loop (or cancelling its task) closes the connection.
    public nonisolated func changes<Model: RoostModel>(of type: Model.Type, after position: Int64? = nil)
        -> ObjectChanges<Model>
    {
        follow(ChangeSubscription(collection: Model.collection), after: position)
    }

    /// The changes to one object: updated and deleted (and left, when the user loses access).
    public nonisolated func changes<Model: RoostModel>(
        of type: Model.Type, guid: String, after position: Int64? = nil
    ) -> ObjectChanges<Model> {
        follow(ChangeSubscription(collection: Model.collection, guid: guid), after: position)
    }

    /// The changes to an object read before.
    public nonisolated func changes<Model: RoostModel>(of object: Stored<Model>, after position: Int64? = nil)
        -> ObjectChanges<Model>
    {
        changes(of: Model.self, guid: object.guid, after: position)
    }

    /// The changes to the objects a query matches: created and updated while matching, entered
    /// when an update makes one match, left when one stops matching, deleted. The query's sort
    /// order and inlining do not apply; `random()` cannot be followed (`invalid_query`).
    public nonisolated func changes<Model: RoostModel>(of query: Query<Model>, after position: Int64? = nil)
        -> ObjectChanges<Model>
    {
        do {
            return follow(
                ChangeSubscription(collection: Model.collection, query: try query.conditionText()),
                after: position)
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
    }

    private nonisolated func follow<Model: RoostModel>(
        _ subscription: ChangeSubscription, after position: Int64?
    )
        -> ObjectChanges<Model>
    {
        let (changes, continuation) = ObjectChanges<Model>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, configuration.changeBufferLimit)))
        let follower = ChangeFollower(
            client: self, subscription: subscription, continuation: continuation, position: position)
        let task = Task { await follower.run() }
        continuation.onTermination = { _ in task.cancel() }
        return changes
    }
}

extension Query {
    /// The changes to the objects this query matches, as `client.changes(of: query)`.
    public func changes(after position: Int64? = nil) -> ObjectChanges<Model> {
        client.changes(of: self, after: position)
    }

    /// The query's condition as the server's query language, nil for the whole collection.
    func conditionText() throws -> String? {
        guard let condition else { return nil }
        let text = try condition.text()
        return text.hasPrefix("(") && !condition.isLeaf ? text : "(\(text))"
    }
}

/// What a change stream subscribes to: `GET /ff/events?collection=…[&guid=…|&query=…]`.
struct ChangeSubscription: Sendable, Equatable {
    var collection: String
    var guid: String?
    var query: String?

    /// The request's path and query string.
    var path: String {
        var parameters = ["collection=" + Self.encode(collection)]
        if let guid { parameters.append("guid=" + Self.encode(guid)) }
        if let query { parameters.append("query=" + Self.encode(query)) }
        return "/ff/events?" + parameters.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    private static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }
}
