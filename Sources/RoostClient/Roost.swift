import Foundation

/// A connection to a Roost server: accounts, objects, queries, the offline queue and the cache.
///
/// ```swift
/// let client = try Roost(serverURL: URL(string: "https://api.example.com")!)
/// try await client.login(userName: "alice", password: "…")
/// let post = try await client.create(Micropost(text: "Hello"))
/// ```
public actor Roost {
    /// The settings this client was made with.
    public nonisolated let configuration: RoostConfiguration
    let transport: any Transport
    let credentials: any CredentialStore
    let cache: ResponseCache
    let log: OperationLog
    /// This installation's device id.
    public nonisolated let deviceId: String

    /// What the credential store holds (for a session that refreshes, its refresh token).
    var credential: Credential?
    var refresh = RefreshState()
    /// The logged-in user: restored from the stored token at launch, refreshed by ``session()``.
    public internal(set) var currentUser: RoostUser?
    var loginHandler: (@Sendable (RoostError) async -> Bool)?
    var delivery = DeliveryState()
    /// How queued writes settle conflicts on the same field; starts as the configuration's.
    public internal(set) var conflictPolicy: ConflictPolicy

    /// A client with the platform's defaults for `serverURL`.
    public init(serverURL: URL) throws {
        try self.init(configuration: RoostConfiguration(serverURL: serverURL))
    }

    /// A client with these settings. Loads the stored token (auto-login) and the offline queue,
    /// and starts delivering queued writes.
    public init(configuration: RoostConfiguration) throws {
        self.configuration = configuration
        conflictPolicy = configuration.conflictPolicy
        transport = configuration.transport
        credentials = configuration.credentialStore
        do {
            try FileSystem.makeFolder(configuration.storageFolder)
            cache = try ResponseCache(
                folder: configuration.storageFolder + "/cache", limit: configuration.cacheLimit)
            log = try OperationLog(path: configuration.storageFolder + "/queue.log")
            deviceId = try configuration.deviceId ?? Self.storedDeviceId(in: configuration.storageFolder)
            credential = try configuration.credentialStore.load()
        } catch let error as RoostError {
            throw error
        } catch {
            throw RoostError.storageFailed(
                "open the client's storage in \(configuration.storageFolder)", error)
        }
        currentUser = credential.map { RoostUser(guid: $0.userGuid, userName: $0.userName) }
        if configuration.deliversInBackground {
            Task { await self.startDelivery() }
        }
    }

    /// The device id kept in the storage folder, made on first use.
    static func storedDeviceId(in folder: String) throws -> String {
        let path = folder + "/device-id"
        if let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8), !text.isEmpty
        {
            return text
        }
        let id = UUID().uuidString.lowercased()
        try FileSystem.writeAtomically(Data(id.utf8), to: path)
        return id
    }

    /// Whether a token is held (it may still turn out to be expired; ``session()`` checks).
    public var isLoggedIn: Bool { credential != nil }

    /// Called when a request is refused for want of a login (401): show the login screen, log in,
    /// and return true to have the request sent again, once. Seed 001's "log in, then carry on".
    public func setLoginHandler(_ handler: (@Sendable (RoostError) async -> Bool)?) {
        loginHandler = handler
    }

    /// Sets how queued writes settle a conflict on the same field, e.g. a handler that asks the
    /// user. Changes to different fields are merged without asking.
    public func setConflictPolicy(_ policy: ConflictPolicy) {
        conflictPolicy = policy
    }

    // MARK: Requests

    /// Sends a request with the current token (or, for queued writes, only with the owner's).
    /// `transfer` streams a file as the body or the answer's body to a file. A session that
    /// refreshes renews its access token first when it is due, and after a 401 `token_expired`
    /// sends the request once more with the new one.
    func send(_ request: TransportRequest, owner: String?? = .none, transfer: FileTransfer? = nil)
        async throws
        -> TransportResponse
    {
        let user: String?
        switch owner {
        case .none: user = nil
        case .some(nil): return try await carry(request, transfer: transfer)
        case .some(let guid?): user = guid
        }
        var sent: String
        switch try await bearer(for: user) {
        case .none: return try await carry(request, transfer: transfer)
        case .refused(let answer): return answer
        case .token(let token): sent = token
        }
        var response = try await carry(authorized(request, with: sent), transfer: transfer)
        if response.status == 401, renews(sent, refusedWith: RoostError.from(response)) {
            switch try await bearer(for: user, replacing: sent) {
            case .none: return response
            case .refused(let answer): return answer
            case .token(let token):
                sent = token
                response = try await carry(authorized(request, with: sent), transfer: transfer)
            }
        }
        if response.status == 401, sent == currentToken, ends(RoostError.from(response)) {
            // Expired or revoked: keeping it would fail every request the same way.
            forgetCredential()
        }
        return response
    }

    private func carry(_ request: TransportRequest, transfer: FileTransfer?) async throws -> TransportResponse
    {
        switch transfer {
        case nil: try await transport.send(request)
        case .upload(let file, let progress):
            try await transport.upload(request, fromFile: file, progress: progress)
        case .download(let file, let progress):
            try await transport.download(request, toFile: file, progress: progress)
        }
    }

    /// Whether a request refused with `sent` goes once more with a renewed token: it expired
    /// sooner than this device's clock said or while the request waited, or an exchange replaced
    /// it (which kills it) while the request was on its way.
    func renews(_ sent: String, refusedWith refusal: RoostError) -> Bool {
        guard credential?.refreshes == true else { return false }
        return refusal.code == .tokenExpired || (refusal.code == .invalidToken && sent != currentToken)
    }

    /// Whether a refusal of the held token ends the session here: revoked, or expired with no
    /// refresh token to renew it.
    func ends(_ refusal: RoostError) -> Bool {
        refusal.code == .invalidToken || (refusal.code == .tokenExpired && credential?.refreshes == false)
    }

    func authorized(_ request: TransportRequest, with token: String) -> TransportRequest {
        var request = request
        switch configuration.tokenHeader {
        case .authorizationBearer: request.headers["Authorization"] = "Bearer \(token)"
        case .xToken: request.headers["X-Token"] = token
        }
        return request
    }

    /// Sends a request and turns an error status into a thrown ``RoostError``; a 401 goes through
    /// the login handler and is retried once if the handler logged someone in.
    func perform(_ request: TransportRequest, retryingAfterLogin: Bool = true, transfer: FileTransfer? = nil)
        async throws -> TransportResponse
    {
        let response = try await send(request, transfer: transfer)
        if response.status < 400 { return response }
        let error = RoostError.from(response)
        if response.status == 401, retryingAfterLogin, let loginHandler, await loginHandler(error) {
            return try await perform(request, retryingAfterLogin: false, transfer: transfer)
        }
        throw error
    }

    /// A JSON request's parts.
    static func jsonRequest(_ method: String, _ path: String, body: some Encodable) throws -> TransportRequest
    {
        TransportRequest(
            method: method, path: path, headers: ["Content-Type": "application/json"],
            body: try Wire.encoder.encode(body))
    }

    func forgetCredential() {
        credential = nil
        refresh.reset()
        currentUser = nil
        try? credentials.clear()
        cache.removeAll()
    }

    /// Keeps a new session: `credential` in the store and, for a session that refreshes, its
    /// `access` token in memory.
    func adopt(_ credential: Credential, user: RoostUser, access: AccessToken? = nil) throws {
        if self.credential?.userGuid != credential.userGuid { cache.removeAll() }
        do {
            try credentials.save(credential)
        } catch {
            throw RoostError.storageFailed("store the token", error)
        }
        self.credential = credential
        refresh.reset(access: access)
        currentUser = user
        wakeDelivery()
    }
}

/// A body streamed from a file, or an answer streamed into one.
enum FileTransfer {
    case upload(URL, ProgressHandler?)
    case download(URL, ProgressHandler?)
}
