/// ``PushStore`` written once for both drivers, beside the accounts whose sessions decide which
/// devices receive.
public final class SQLPushStore<Database: SQLDatabase>: PushStore {
    let database: Database

    static var statements: PushSQL { PushSQL(clock: Database.Connection.Dialect.clock) }

    /// The tables, for each driver's migrations.
    public static var schema: String { PushSQL.schema }

    public init(database: Database) {
        self.database = database
    }

    public func register(_ device: PushDeviceRecord, limit: Int) async throws -> PushDeviceRecord {
        try await database.write { connection in
            // One user's registrations one after the other, so two cannot both pass the cap.
            try connection.lock(.sessions, device.userGuid)
            return try Self.statements.register(connection, device, limit: limit)
        }
    }

    public func device(userGuid: String, deviceId: String) async throws -> PushDeviceRecord? {
        try await database.pointRead { connection in
            try connection.first(
                """
                SELECT \(raw: PushSQL.deviceColumns) FROM push_devices
                WHERE user_guid = \(userGuid) AND device_id = \(deviceId)
                """, PushSQL.device)
        }
    }

    public func devices(
        userGuid: String?, after: (userGuid: String, deviceId: String)?, limit: Int, now: Int64
    ) async throws -> [PushDeviceRecord] {
        var conditions: [SQL] = []
        if let userGuid { conditions.append("user_guid = \(userGuid)") }
        if let after {
            conditions.append(
                "(user_guid > \(after.userGuid) OR (user_guid = \(after.userGuid) AND device_id > \(after.deviceId)))"
            )
        }
        let filter = conditions.isEmpty ? SQL("") : " WHERE " + SQL.joined(conditions, separator: " AND ")
        let sql: SQL =
            "SELECT \(raw: PushSQL.deviceColumns), " + PushSQL.liveSession("push_devices", now: now)
            + " FROM push_devices" + filter + " ORDER BY user_guid, device_id LIMIT \(Int64(limit))"
        return try await database.pooledRead(consistent: false, measuredBySteps: true) { connection in
            try connection.query(sql) { row in
                var device = PushSQL.device(row)
                device.receiving = row.integer(8) != 0
                return device
            }
        }
    }

    public func deleteDevice(userGuid: String, deviceId: String) async throws -> Bool {
        try await database.write { connection in
            try connection.run(
                "DELETE FROM push_devices WHERE user_guid = \(userGuid) AND device_id = \(deviceId)") > 0
        }
    }

    public func enqueue(
        id: String, notification: String, audience: PushAudience, createdBy: String?, now: Int64
    ) async throws -> Int {
        try await database.write { connection in
            try Self.statements.enqueue(
                connection, id: id, notification: notification, audience: audience, createdBy: createdBy,
                now: now)
        }
    }

    public func claimLease(holder: String, for duration: Duration) async throws -> Bool {
        try await database.write { try Self.statements.claim($0, holder: holder, for: duration) }
    }

    public func releaseLease(holder: String) async throws {
        try await database.write { try Self.statements.release($0, holder: holder) }
    }

    public func hasWork(now: Int64, instance: String) async throws -> Bool {
        try await database.pointRead { try Self.statements.hasWork($0, now: now, instance: instance) }
    }

    public func claimDue(now: Int64, limit: Int, holder: String, instance: String) async throws
        -> [PushDelivery]
    {
        try await database.write {
            try Self.statements.claimDue($0, now: now, limit: limit, holder: holder, instance: instance)
        }
    }

    public func record(
        _ outcome: PushRecordedOutcome, pushID: String, userGuid: String, deviceId: String, token: String,
        instance: String, now: Int64
    ) async throws -> Bool {
        try await database.write {
            try Self.statements.record(
                $0, outcome, pushID: pushID, userGuid: userGuid, deviceId: deviceId, token: token,
                instance: instance, now: now)
        }
    }

    public func queueDepth() async throws -> Int {
        try await database.pooledRead(consistent: false, measuredBySteps: true) { connection in
            Int(
                try connection.first("SELECT count(*) FROM push_outbox WHERE state IN ('pending', 'sending')")
                {
                    $0.integer(0)
                } ?? 0)
        }
    }

    public func prune(finishedBefore cutoff: Int64) async throws {
        try await database.write { try Self.statements.prune($0, before: cutoff) }
    }

    public func status(id: String, limit: Int) async throws -> PushStatus? {
        try await database.pooledRead(consistent: true, measuredBySteps: true) { connection in
            try Self.statements.status(connection, id: id, limit: limit)
        }
    }
}
