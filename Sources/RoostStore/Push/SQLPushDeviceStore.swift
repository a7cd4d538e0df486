/// ``PushDeviceStore`` written once: the push token lives in four columns of `devices`.
public final class SQLPushDeviceStore<Database: SQLDatabase>: PushDeviceStore {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// The columns, added to `devices` by both drivers' migrations; a token is unique.
    public static var schema: String {
        """
        ALTER TABLE devices ADD COLUMN push_platform TEXT;
        ALTER TABLE devices ADD COLUMN push_token TEXT;
        ALTER TABLE devices ADD COLUMN push_environment TEXT;
        ALTER TABLE devices ADD COLUMN push_bundle_id TEXT;
        ALTER TABLE devices ADD COLUMN push_updated_at BIGINT;
        CREATE UNIQUE INDEX devices_by_push_token ON devices (push_token);
        """
    }

    private static var columns: String {
        "user_guid, device_id, push_platform, push_token, push_environment, push_bundle_id, push_updated_at"
    }

    private static func device(_ row: some DatabaseRow) -> PushDeviceRecord {
        PushDeviceRecord(
            userGuid: row.text(0) ?? "", deviceId: row.text(1) ?? "", platform: row.text(2) ?? "",
            token: row.text(3) ?? "", environment: row.text(4), bundleID: row.text(5) ?? "",
            updatedAt: row.integer(6))
    }

    public func register(_ device: PushDeviceRecord, now: Int64, maximumPerUser: Int) async throws
        -> PushRegistration
    {
        try await database.write { connection in
            let live = try connection.first(
                """
                SELECT 1 FROM tokens WHERE user_guid = \(device.userGuid) AND device_id = \(device.deviceId)
                AND expires_at > \(now) LIMIT 1
                """
            ) { $0.integer(0) }
            guard live != nil else { return .unknownDevice }
            let others =
                try connection.first(
                    """
                    SELECT count(*) FROM devices WHERE user_guid = \(device.userGuid)
                    AND push_token IS NOT NULL AND device_id <> \(device.deviceId)
                    """
                ) { $0.integer(0) } ?? 0
            guard others < Int64(maximumPerUser) else { return .tooManyDevices }
            // The token moves: another device (of this user or another) that held it loses it.
            try connection.run(
                """
                UPDATE devices SET push_platform = NULL, push_token = NULL, push_environment = NULL,
                push_bundle_id = NULL, push_updated_at = NULL
                WHERE push_token = \(device.token)
                AND NOT (user_guid = \(device.userGuid) AND device_id = \(device.deviceId))
                """)
            try connection.run(
                """
                UPDATE devices SET push_platform = \(device.platform), push_token = \(device.token),
                push_environment = \(device.environment), push_bundle_id = \(device.bundleID),
                push_updated_at = \(device.updatedAt)
                WHERE user_guid = \(device.userGuid) AND device_id = \(device.deviceId)
                """)
            return .registered
        }
    }

    public func devices(userGuid: String) async throws -> [PushDeviceRecord] {
        try await database.pointRead { connection in
            try connection.query(
                """
                SELECT \(raw: Self.columns) FROM devices
                WHERE user_guid = \(userGuid) AND push_token IS NOT NULL ORDER BY device_id
                """, Self.device)
        }
    }

    public func unregister(userGuid: String, deviceId: String) async throws -> Bool {
        try await database.write { connection in
            try connection.run(
                """
                UPDATE devices SET push_platform = NULL, push_token = NULL, push_environment = NULL,
                push_bundle_id = NULL, push_updated_at = NULL
                WHERE user_guid = \(userGuid) AND device_id = \(deviceId) AND push_token IS NOT NULL
                """) > 0
        }
    }

    public func receivingDevices(userGuids: [String], now: Int64) async throws -> [PushDeviceRecord] {
        var found: [PushDeviceRecord] = []
        // In slices, so that no statement binds more parameters than a driver takes.
        for start in stride(from: 0, to: userGuids.count, by: 500) {
            let slice = userGuids[start..<min(start + 500, userGuids.count)]
            found += try await receivingDevices(slice: Array(slice), now: now)
        }
        return found
    }

    private func receivingDevices(slice: [String], now: Int64) async throws -> [PushDeviceRecord] {
        let users = SQL.joined(slice.map { (guid: String) -> SQL in "\(guid)" }, separator: ", ")
        return try await database.pointRead { connection in
            try connection.query(
                """
                SELECT \(raw: Self.columns) FROM devices AS d
                WHERE d.user_guid IN (\(users)) AND d.push_token IS NOT NULL
                AND EXISTS (SELECT 1 FROM tokens AS t WHERE t.user_guid = d.user_guid
                            AND t.device_id = d.device_id AND t.expires_at > \(now))
                ORDER BY d.user_guid, d.device_id
                """, Self.device)
        }
    }

    public func forget(platform: String, token: String) async throws -> Bool {
        try await database.write { connection in
            try connection.run(
                """
                UPDATE devices SET push_platform = NULL, push_token = NULL, push_environment = NULL,
                push_bundle_id = NULL, push_updated_at = NULL
                WHERE push_platform = \(platform) AND push_token = \(token)
                """) > 0
        }
    }
}
