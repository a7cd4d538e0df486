import Foundation
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

@Suite("PostgreSQL driver: connection strings and secrets")
struct DriverConfigurationTests {
    static let password = "s3cr3t-Pa55word"

    @Test(arguments: [
        "postgres://roost:\(password)@127.0.0.1:1/roost",
        "postgresql://roost:\(password)@127.0.0.1:1/roost?sslmode=disable",
        "postgresql://roost@127.0.0.1:1/roost?password=\(password)&sslmode=disable",
        "host=127.0.0.1 port=1 user=roost password=\(password) dbname=roost",
        "host=127.0.0.1 port=1 user=roost password='\(password)' dbname=roost",
    ])
    func thePasswordIsNeverInTheRedactedFormNorInErrors(_ string: String) async throws {
        let configuration = try PostgresConfiguration(connectionString: string)
        #expect(configuration.redacted.contains("***"))
        #expect(!configuration.redacted.contains(Self.password))
        do {
            _ = try PostgresDatabase(configuration: configuration, migrations: [])
            Issue.record("connected to a closed port")
        } catch {
            let text = "\(error) \(String(reflecting: error))"
            #expect(text.contains("127.0.0.1"))
            #expect(!text.contains(Self.password))
        }
    }

    @Test func aPercentEncodedPasswordIsRedactedToo() throws {
        let configuration = try PostgresConfiguration(
            connectionString: "postgres://roost:p%40ss%2Fw0rd@db/roost")
        #expect(configuration.redacted == "postgres://roost:***@db/roost")
        #expect(configuration.scrubbed("login p@ss/w0rd or p%40ss%2Fw0rd") == "login *** or ***")
    }

    @Test func aStringWithoutAPasswordIsShownAsItIs() throws {
        let url = "postgresql:///postgres?host=/tmp/x&user=roost"
        #expect(try PostgresConfiguration(connectionString: url).redacted == url)
    }

    @Test(arguments: [
        "mysql://roost@db/roost", "http://db/roost", "just some words", "", "postgres://db:port/x y",
    ])
    func anythingElseIsRefusedSayingWhatIsExpected(_ string: String) {
        do {
            _ = try PostgresConfiguration(connectionString: string)
            Issue.record("accepted \(string)")
        } catch {
            #expect("\(error)".contains("postgres://"))
            #expect("\(error)".contains("key=value"))
        }
    }

    @Test func anotherDatabaseKeepsTheServerAndTheSettings() throws {
        var configuration = try PostgresConfiguration(
            connectionString: "postgres://roost:\(Self.password)@db:5433/roost")
        configuration.poolSize = 3
        let other = configuration.replacingDatabase(with: "roost_t_1")
        #expect(other.poolSize == 3)
        #expect(other.connectionString.contains("dbname=roost_t_1"))
        #expect(other.connectionString.contains("port=5433") && other.connectionString.contains("host=db"))
        #expect(!other.redacted.contains(Self.password))
    }

    @Test func theTestServerIsConfigured() throws {
        // Fails (never passes silently) when the suite runs without scripts/test.sh's cluster.
        _ = try PostgresTestDatabase.serverConfiguration()
    }
}
