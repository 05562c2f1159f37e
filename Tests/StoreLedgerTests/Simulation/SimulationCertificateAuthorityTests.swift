import Crypto
import Foundation
import StoreLedgerSimulation
import Testing

/// The development CA: minted once, persisted with private keys kept private, loaded identically afterwards.
@Suite("Simulation: development CA")
struct SimulationCertificateAuthorityTests {
    @Test("the first call mints and writes the CA; later calls load the same root")
    func persistsAndReloads() throws {
        let parent = SimulationFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("nested/dev-ca", isDirectory: true)

        let first = try DevelopmentCertificateAuthority.loadOrCreate(at: folder)
        #expect(first.wasCreated)
        let second = try DevelopmentCertificateAuthority.loadOrCreate(at: folder)
        #expect(!second.wasCreated)
        #expect(second.rootDER == first.rootDER)
        #expect(second.rootBase64 == first.rootBase64)
        #expect(second.chain.x5c == first.chain.x5c)
        #expect(second.chain.leafKey.rawRepresentation == first.chain.leafKey.rawRepresentation)
        #expect(try Data(contentsOf: second.rootDERFile) == first.rootDER)
        #expect(Data(base64Encoded: first.rootBase64) == first.rootDER)
    }

    @Test("private keys are 0600 in a 0700 folder; certificates are readable")
    func filePermissions() throws {
        let parent = SimulationFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let ca = try DevelopmentCertificateAuthority.loadOrCreate(at: parent.appendingPathComponent("dev-ca"))
        func mode(_ name: String) throws -> Int {
            let path = name.isEmpty ? ca.directory.path : ca.directory.appendingPathComponent(name).path
            return try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode("") == 0o700)
        for key in ["root.key.pem", "intermediate.key.pem", "leaf.key.pem"] {
            #expect(try mode(key) == 0o600, "\(key)")
        }
        for certificate in ["root.pem", "root.der", "intermediate.pem", "leaf.pem"] {
            #expect(try mode(certificate) == 0o644, "\(certificate)")
        }
        let contents = try FileManager.default.contentsOfDirectory(atPath: parent.path)
        #expect(contents == ["dev-ca"], "no staging folder is left behind")
    }

    @Test("an empty folder is filled; an incomplete one is an error that says what to do")
    func emptyAndIncompleteFolders() throws {
        let parent = SimulationFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("dev-ca")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try DevelopmentCertificateAuthority.loadOrCreate(at: folder).wasCreated)

        try FileManager.default.removeItem(at: folder.appendingPathComponent("leaf.key.pem"))
        let error = #expect(throws: SimulationError.self) { try DevelopmentCertificateAuthority.loadOrCreate(at: folder) }
        #expect(error?.code == .invalidCertificateAuthority)
        #expect(error?.detail.contains("leaf.key.pem") == true)
    }

    @Test("a key that does not belong to its certificate is rejected")
    func mismatchedKey() throws {
        let parent = SimulationFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("dev-ca")
        _ = try DevelopmentCertificateAuthority.loadOrCreate(at: folder)
        let other = try SigningChain()
        try Data(other.leafKey.pemRepresentation.utf8).write(to: folder.appendingPathComponent("leaf.key.pem"))
        let error = #expect(throws: SimulationError.self) { try DevelopmentCertificateAuthority.load(from: folder) }
        #expect(error?.code == .invalidCertificateAuthority)
    }

    @Test("processes racing to create the CA end up with one root")
    func concurrentCreation() async throws {
        let parent = SimulationFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("dev-ca")
        let roots = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<6 {
                group.addTask { try DevelopmentCertificateAuthority.loadOrCreate(at: folder).rootDER }
            }
            return try await group.reduce(into: Set<Data>()) { $0.insert($1) }
        }
        #expect(roots.count == 1)
        #expect(roots.first == (try DevelopmentCertificateAuthority.load(from: folder).rootDER))
    }
}
