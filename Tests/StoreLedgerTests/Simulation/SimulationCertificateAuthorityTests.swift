import Crypto
import Foundation
import StoreLedgerCore
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

    /// The 60-renewal monthly plan of `bench/drain --signed 20000 --renewals 60`.
    static func sixtyMonthlyRenewals(now: Date = Date()) -> SimulationPlan {
        SimulationPlan(
            selection: .lifecycle(.renewals), subscriptions: 3, seed: 42, bundleID: BundleID(SimulationFixtures.bundleID),
            appAppleID: SimulationFixtures.appAppleID, renewals: 60, now: Timestamp(now))
    }

    @Test("a newly minted CA covers every date the simulator can sign: the longest history back, and years ahead")
    func mintedCACoversTheSimulatorsRange() throws {
        let parent = SimulationFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let ca = try DevelopmentCertificateAuthority.loadOrCreate(at: parent.appendingPathComponent("dev-ca"))
        #expect(ca.covers(DevelopmentCertificateAuthority.requiredValidity()))
        #expect(ca.covers(try Self.sixtyMonthlyRenewals().signedDateRange()))
        let yearly = SimulationPlan(
            selection: .lifecycle(.renewals), subscriptions: 1, seed: 1, bundleID: "com.example.storeledger", appAppleID: 1,
            period: LifecycleSetup.year, renewals: 19, now: Timestamp(Date()))
        #expect(ca.covers(try yearly.signedDateRange()))
        // Reloaded a year later, it still covers what a run then signs.
        #expect(ca.covers(DevelopmentCertificateAuthority.requiredValidity(at: Date().addingTimeInterval(365 * 86_400))))
        #expect(ca.covers(try Self.sixtyMonthlyRenewals(now: Date().addingTimeInterval(365 * 86_400)).signedDateRange()))
    }

    @Test("a plan longer than the simulator's history is refused before anything is signed")
    func overLongPlansAreRefused() {
        let plan = SimulationPlan(
            selection: .lifecycle(.renewals), subscriptions: 1, seed: 1, bundleID: "com.example.storeledger", appAppleID: 1,
            period: LifecycleSetup.year, renewals: 25, now: Timestamp(Date()))
        let error = #expect(throws: SimulationError.self) { try plan.signedDateRange() }
        #expect(error?.code == .invalidOptions)
        #expect(error?.detail.contains("20 years") == true)
    }

    @Test("a CA valid only five years back (as older StoreLedgers minted it) is detected with a message that says what to do")
    func fiveYearCAIsDetected() throws {
        let now = Date()
        let year: TimeInterval = 365.25 * 86_400
        let validity = now.addingTimeInterval(-5 * year)...now.addingTimeInterval(20 * year)
        let chain = try SigningChain(SigningChain.Options(names: .storeLedgerDevelopment, caValidity: validity, leafValidity: validity))
        let old = DevelopmentCertificateAuthority(directory: URL(fileURLWithPath: "/tmp/dev-ca"), chain: chain, wasCreated: false)
        let range = try Self.sixtyMonthlyRenewals(now: now).signedDateRange()
        #expect(!old.covers(range), "61 months of 30 days reach further back than five years")
        #expect(!old.covers(DevelopmentCertificateAuthority.requiredValidity(at: now)))
        let error = #expect(throws: SimulationError.self) { try old.requireCovers(range) }
        #expect(error?.code == .outdatedCertificateAuthority)
        #expect(error?.detail.contains("--renew-ca") == true)
        #expect(error?.detail.contains("/tmp/dev-ca") == true)
    }

    @Test("loading with a range renews a CA that does not cover it, keeps its old root trusted, and leaves no staging folder")
    func outdatedCAIsRenewedKeepingItsOldRoot() throws {
        let parent = SimulationFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("dev-ca")
        // Minted 25 years ago: valid until five years ago.
        let old = try DevelopmentCertificateAuthority.renew(at: folder, now: Date().addingTimeInterval(-25 * 365.25 * 86_400))
        #expect(old.supersededRootsDER.isEmpty)
        let required = DevelopmentCertificateAuthority.requiredValidity()
        #expect(!(try DevelopmentCertificateAuthority.loadOrCreate(at: folder)).covers(required))

        let renewed = try DevelopmentCertificateAuthority.loadOrCreate(at: folder, covering: required)
        #expect(renewed.wasCreated)
        #expect(renewed.covers(required))
        #expect(renewed.rootDER != old.rootDER)
        #expect(renewed.supersededRootsDER == [old.rootDER])
        #expect(renewed.trustedRootsDER == [renewed.rootDER, old.rootDER])

        let reloaded = try DevelopmentCertificateAuthority.loadOrCreate(at: folder, covering: required)
        #expect(!reloaded.wasCreated, "a CA that covers the range is loaded, not renewed")
        #expect(reloaded.rootDER == renewed.rootDER)
        #expect(reloaded.supersededRootsDER == [old.rootDER])

        let again = try DevelopmentCertificateAuthority.renew(at: folder)
        #expect(again.supersededRootsDER == [renewed.rootDER, old.rootDER], "newest first")
        #expect(try DevelopmentCertificateAuthority.load(from: folder).supersededRootsDER == again.supersededRootsDER)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["dev-ca"])
    }
}
