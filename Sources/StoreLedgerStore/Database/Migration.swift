package import Foundation

/// One numbered plain-SQL migration from `sql/`, named `NNNN_description.sql`.
package struct Migration: Sendable, Hashable {
    /// The number that orders migrations (the file name's leading digits).
    package let version: Int
    /// The file name without its extension.
    package let name: String
    /// The SQL to run, possibly several statements.
    package let sql: String
    /// Hex SHA-256 of the SQL, recorded so that an edited, already-applied migration is caught.
    package let checksum: String

    /// Creates a migration from its file name and SQL text.
    package init(fileName: String, sql: String) throws {
        let name = fileName.hasSuffix(".sql") ? String(fileName.dropLast(4)) : fileName
        guard let version = Int(name.prefix(while: \.isNumber)), version > 0 else {
            throw StoreError.configuration("migration file \(fileName) must start with its version number, e.g. 0001_name.sql")
        }
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256Digest.hex(of: Data(sql.utf8))
    }

    /// Loads every `*.sql` file in `directory`, ordered by version; duplicate versions are an error.
    package static func load(from directory: URL) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }
        let migrations = try files.map { file in
            try Migration(fileName: file, sql: String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8))
        }.sorted { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw StoreError.configuration("migrations \(previous.name) and \(next.name) share version \(next.version)")
        }
        return migrations
    }

    /// The migrations shipped with this build (the repository's `sql/` folder).
    package static func bundled() throws -> [Migration] {
        guard let directory = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw StoreError.configuration("the bundled migrations (sql/) are missing from this build's resources")
        }
        return try load(from: directory)
    }
}
