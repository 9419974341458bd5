import NativePostgres
import Testing

@Suite struct PostgresConnectionStringTests {
    @Test(arguments: [
        "postgresql://upgate:secret@127.0.0.1:5432/upgate",
        "host=127.0.0.1 dbname=upgate password=secret",
        "postgresql://upgate@127.0.0.1/upgate?password=secret",
    ])
    func aPasswordInTheStringIsRefused(_ value: String) {
        #expect(throws: PostgresError(.configuration)) { try PostgresConnectionString(value) }
        // The refusal must not repeat the password.
        let error = try? #require(throws: PostgresError.self) { try PostgresConnectionString(value) }
        #expect(error?.message.contains("secret") == false)
    }

    @Test func aMalformedStringIsAConfigurationError() {
        #expect(throws: PostgresError(.configuration)) { try PostgresConnectionString("host=127.0.0.1 dbname='open") }
        #expect(throws: PostgresError(.configuration)) { try PostgresConnectionString("postgresql://h/db?nosuchkeyword=1") }
    }

    @Test func theDescriptionNamesUserHostPortAndDatabase() throws {
        let url = try PostgresConnectionString("postgresql://upgate@127.0.0.1:5433/records?passfile=/etc/upgate/pgpass")
        #expect(url.description == "upgate@127.0.0.1:5433/records")
        let keywords = try PostgresConnectionString("host=db.internal dbname=upgate")
        #expect(keywords.description == "db.internal/upgate")
    }
}
