import Crypto
package import Foundation
package import StoreLedgerCore
import SwiftASN1
import X509

/// A local, persistent App Store-like CA for development: a root, an Apple-like intermediate and a signing leaf
/// (P-256), minted once into a folder and loaded from it afterwards, so the ledger (`storeledger dev`) and the
/// simulator (`storeledger simulate`) agree on what to trust without configuration.
///
/// Files (PEM and DER; private keys are PKCS#8 PEM, mode 0600, in a 0700 folder):
/// `root.pem`, `root.der`, `root.key.pem`, `intermediate.pem`, `intermediate.key.pem`, `leaf.pem`, `leaf.key.pem`,
/// and `superseded/*.der`: the roots of CAs this one replaced (``renew(at:now:)``), still trusted by `dev` so that
/// what they signed keeps verifying.
///
/// The three certificates are valid from ``SimulationPlan/maximumHistory`` (plus a day) before minting to twenty
/// years after, so any timeline the simulator can play verifies (Apple's verifiers check validity at the payload's
/// `signedDate`). A CA that does not cover a run is detected (``covers(_:)``): `dev` renews it when it starts,
/// `simulate` refuses it (or renews it with `--renew-ca`).
/// Delete the folder to mint a new CA. Never trust this root outside development: its keys sit on disk.
package struct DevelopmentCertificateAuthority: Sendable {
    /// `.local/dev-ca`, relative to the working directory (the repository root under `swift run`); git-ignored.
    package static let defaultDirectoryPath = ".local/dev-ca"

    /// The folder the CA lives in.
    package let directory: URL
    /// The root, intermediate and leaf with their keys.
    package let chain: SigningChain
    /// Whether this call minted the CA (`false`: it was loaded from ``directory``).
    package let wasCreated: Bool
    /// The roots of the CAs this one replaced, as DER (newest first); `dev` keeps trusting them.
    package let supersededRootsDER: [Data]

    /// Wraps a chain stored in a folder.
    package init(directory: URL, chain: SigningChain, wasCreated: Bool, supersededRootsDER: [Data] = []) {
        self.directory = directory
        self.chain = chain
        self.wasCreated = wasCreated
        self.supersededRootsDER = supersededRootsDER
    }

    /// How far back a newly minted CA is valid: the simulator's longest history plus a day.
    package static let historyCovered: TimeInterval = Double(SimulationPlan.maximumHistory) / 1000 + 86_400
    /// How far ahead a newly minted CA is valid: twenty years.
    package static let futureCovered: TimeInterval = 20 * 365.25 * 86_400

    /// Where all three certificates are valid: the latest `notValidBefore` to the earliest `notValidAfter`.
    package var validity: ClosedRange<Date> {
        let certificates = [chain.root, chain.intermediate, chain.leaf]
        let from = certificates.map(\.notValidBefore).max()!
        let until = certificates.map(\.notValidAfter).min()!
        return from...max(from, until)
    }

    /// Whether every date in `range` is inside ``validity``, i.e. a payload signed at any of them verifies.
    package func covers(_ range: ClosedRange<Timestamp>) -> Bool {
        validity.contains(range.lowerBound.date) && validity.contains(range.upperBound.date)
    }

    /// Throws ``SimulationError/Code/outdatedCertificateAuthority`` with what to do when ``covers(_:)`` is false.
    package func requireCovers(_ range: ClosedRange<Timestamp>) throws(SimulationError) {
        guard !covers(range) else { return }
        let format = ISO8601DateFormatter()
        throw SimulationError(
            .outdatedCertificateAuthority,
            "the development CA in \(directory.path) is valid from \(format.string(from: validity.lowerBound)) to "
                + "\(format.string(from: validity.upperBound)), but this run signs dates from "
                + "\(format.string(from: range.lowerBound.date)) to \(format.string(from: range.upperBound.date)) "
                + "(a CA minted by an older StoreLedger covers only five years back). Renew it with --renew-ca, or restart "
                + "`storeledger dev`, which renews it; a running ledger must be restarted to trust the new root")
    }

    /// The dates a CA must cover for `dev` at `now`: every signed date `simulate` can produce from now on
    /// (``SimulationPlan/maximumHistory`` back) and a day ahead.
    package static func requiredValidity(at now: Date = Date()) -> ClosedRange<Timestamp> {
        let end = Timestamp(now).wholeMilliseconds
        return end.adding(milliseconds: -(SimulationPlan.maximumHistory + SimulationPlan.endJitter))...end.adding(milliseconds: 86_400_000)
    }

    /// The roots to trust for this CA: its own and the ones it superseded.
    package var trustedRootsDER: [Data] { [rootDER] + supersededRootsDER }

    /// ``defaultDirectoryPath`` resolved against the current working directory.
    package static var defaultDirectory: URL {
        URL(fileURLWithPath: defaultDirectoryPath, isDirectory: true)
    }

    /// The root certificate as DER: trust it with `TrustConfiguration(rootCertificatesDER:)`.
    package var rootDER: Data { chain.rootDER }
    /// The root as base64 DER: a value for `APPLE_ROOT_CAS_DER_BASE64`.
    package var rootBase64: String { chain.rootBase64 }
    /// The path of `root.der` (for `storeledger verify --root`).
    package var rootDERFile: URL { directory.appendingPathComponent(File.rootDER) }

    /// A signer producing App Store-shaped JWS with this CA's leaf.
    package func signer() -> AppStoreJWSSigner {
        AppStoreJWSSigner(chain: chain)
    }

    /// Loads the CA in `directory`, or mints one there first if the folder holds none (`root.pem` absent); when
    /// `range` is given and the CA found does not cover it, renews it (``renew(at:now:)``).
    ///
    /// Safe to call from two processes at once: a new CA is written to a sibling folder and renamed into place,
    /// and the loser of a race loads the winner's CA.
    package static func loadOrCreate(
        at directory: URL = defaultDirectory, covering range: ClosedRange<Timestamp>? = nil
    ) throws(SimulationError) -> Self {
        let ca = try loadOrMint(at: directory)
        guard let range, !ca.covers(range) else { return ca }
        return try renew(at: directory)
    }

    /// Replaces the CA in `directory` by a newly minted one, keeping the old root (and those it superseded) in
    /// `superseded/` so that `dev` still trusts what it signed. A ledger already running must be restarted to
    /// trust the new root.
    package static func renew(at directory: URL = defaultDirectory, now: Date = Date()) throws(SimulationError) -> Self {
        let manager = FileManager.default
        let old = try? load(from: directory)
        let superseded = old.map { [$0.rootDER] + $0.supersededRootsDER } ?? []
        let parent = directory.deletingLastPathComponent()
        let staging = parent.appendingPathComponent(".\(directory.lastPathComponent).\(UUID().uuidString)")
        let retired = parent.appendingPathComponent(".\(directory.lastPathComponent).retired.\(UUID().uuidString)")
        do {
            try manager.createDirectory(at: parent, withIntermediateDirectories: true)
            let chain = try mint(now: now)
            try write(chain, to: staging, superseded: superseded)
            if manager.fileExists(atPath: directory.path) {
                try manager.moveItem(at: directory, to: retired)
            }
            try manager.moveItem(at: staging, to: directory)
            try? manager.removeItem(at: retired)
            return Self(directory: directory, chain: chain, wasCreated: true, supersededRootsDER: superseded)
        } catch let error as SimulationError {
            try? manager.removeItem(at: staging)
            throw error
        } catch {
            try? manager.removeItem(at: staging)
            throw SimulationError(
                .fileSystem, "cannot renew the development CA in \(directory.path): \(error.localizedDescription)")
        }
    }

    /// Loads the CA in `directory`, or mints one there first if the folder holds none.
    private static func loadOrMint(at directory: URL) throws(SimulationError) -> Self {
        let manager = FileManager.default
        if manager.fileExists(atPath: directory.appendingPathComponent(File.rootPEM).path) {
            return try load(from: directory)
        }
        let parent = directory.deletingLastPathComponent()
        let staging = parent.appendingPathComponent(".\(directory.lastPathComponent).\(UUID().uuidString)")
        do {
            try manager.createDirectory(at: parent, withIntermediateDirectories: true)
            let chain = try mint()
            try write(chain, to: staging)
            // An empty folder (created by hand) is replaced; a non-empty one without root.pem is an error below.
            if let contents = try? manager.contentsOfDirectory(atPath: directory.path), contents.isEmpty {
                try? manager.removeItem(at: directory)
            }
            do {
                try manager.moveItem(at: staging, to: directory)
                return Self(directory: directory, chain: chain, wasCreated: true)
            } catch {
                try? manager.removeItem(at: staging)
                if manager.fileExists(atPath: directory.appendingPathComponent(File.rootPEM).path) {
                    return try load(from: directory)  // another process won the race
                }
                throw SimulationError(
                    .fileSystem,
                    "cannot create the development CA in \(directory.path): \(error.localizedDescription)"
                )
            }
        } catch let error as SimulationError {
            try? manager.removeItem(at: staging)
            throw error
        } catch {
            try? manager.removeItem(at: staging)
            throw SimulationError(
                .fileSystem, "cannot create the development CA in \(directory.path): \(error.localizedDescription)")
        }
    }

    /// Loads the CA stored in `directory`; fails if any file is missing or the keys and certificates disagree.
    package static func load(from directory: URL) throws(SimulationError) -> Self {
        func text(_ name: String) throws(SimulationError) -> String {
            let url = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw SimulationError(
                    .invalidCertificateAuthority,
                    "\(url.path) is missing; delete \(directory.path) to mint a new development CA")
            }
            return String(decoding: data, as: UTF8.self)
        }
        func certificate(_ name: String) throws(SimulationError) -> Certificate {
            let pem = try text(name)
            do {
                return try Certificate(pemEncoded: pem)
            } catch {
                throw SimulationError(.invalidCertificateAuthority, "\(name) in \(directory.path) is not a PEM certificate")
            }
        }
        func key(_ name: String) throws(SimulationError) -> P256.Signing.PrivateKey {
            let pem = try text(name)
            do {
                return try P256.Signing.PrivateKey(pemRepresentation: pem)
            } catch {
                throw SimulationError(.invalidCertificateAuthority, "\(name) in \(directory.path) is not a P-256 PEM key")
            }
        }
        let chain: SigningChain
        do {
            chain = try SigningChain(
                rootKey: key(File.rootKey), intermediateKey: key(File.intermediateKey), leafKey: key(File.leafKey),
                root: certificate(File.rootPEM), intermediate: certificate(File.intermediatePEM),
                leaf: certificate(File.leafPEM)
            )
        } catch {
            throw SimulationError(error.code, "\(error.detail) (in \(directory.path); delete it to mint a new CA)")
        }
        return Self(directory: directory, chain: chain, wasCreated: false, supersededRootsDER: supersededRoots(in: directory))
    }

    /// The DER roots in `directory/superseded`, sorted by file name; unreadable files are skipped.
    static func supersededRoots(in directory: URL) -> [Data] {
        let folder = directory.appendingPathComponent(File.superseded, isDirectory: true)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return names.filter { $0.hasSuffix(".der") }.sorted().compactMap { name in
            FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
        }
    }

    /// Mints a development chain valid from ``historyCovered`` before `now` (the simulator's longest history and
    /// a day) to ``futureCovered`` after, so every lifecycle the simulator dates in the past verifies.
    package static func mint(now: Date = Date()) throws(SimulationError) -> SigningChain {
        let validity = now.addingTimeInterval(-historyCovered)...now.addingTimeInterval(futureCovered)
        do {
            return try SigningChain(
                SigningChain.Options(names: .storeLedgerDevelopment, caValidity: validity, leafValidity: validity))
        } catch let error as SimulationError {
            throw error
        } catch {
            throw SimulationError(.signing, "cannot mint the development CA: \(error)")
        }
    }

    /// Writes a chain's files into a new folder (mode 0700; keys 0600), with the roots it supersedes.
    static func write(_ chain: SigningChain, to folder: URL, superseded: [Data] = []) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        func save(_ data: Data, _ name: String, secret: Bool = false) throws {
            let url = folder.appendingPathComponent(name)
            // Created with its final mode, so a key is never readable by others, not even briefly.
            guard manager.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: secret ? 0o600 : 0o644])
            else {
                throw SimulationError(.fileSystem, "cannot write \(url.path)")
            }
        }
        try save(Data(chain.root.serializeAsPEM().pemString.utf8 + [0x0A]), File.rootPEM)
        try save(chain.rootDER, File.rootDER)
        try save(Data(chain.rootKey.pemRepresentation.utf8 + [0x0A]), File.rootKey, secret: true)
        try save(Data(chain.intermediate.serializeAsPEM().pemString.utf8 + [0x0A]), File.intermediatePEM)
        try save(Data(chain.intermediateKey.pemRepresentation.utf8 + [0x0A]), File.intermediateKey, secret: true)
        try save(Data(chain.leaf.serializeAsPEM().pemString.utf8 + [0x0A]), File.leafPEM)
        try save(Data(chain.leafKey.pemRepresentation.utf8 + [0x0A]), File.leafKey, secret: true)
        if !superseded.isEmpty {
            try manager.createDirectory(at: folder.appendingPathComponent(File.superseded), withIntermediateDirectories: false)
            for (index, root) in superseded.enumerated() {
                // Numbered newest first, as listed, so the order survives a reload.
                let name = String(format: "%04d.der", index)
                try save(root, "\(File.superseded)/\(name)")
            }
        }
    }

    /// The file names inside the folder.
    enum File {
        /// The root certificate, PEM; its presence means "a CA lives here".
        static let rootPEM = "root.pem"
        /// The root certificate, DER (for `storeledger verify --root`).
        static let rootDER = "root.der"
        /// The root's private key, PKCS#8 PEM, 0600.
        static let rootKey = "root.key.pem"
        /// The intermediate certificate, PEM.
        static let intermediatePEM = "intermediate.pem"
        /// The intermediate's private key, PKCS#8 PEM, 0600.
        static let intermediateKey = "intermediate.key.pem"
        /// The leaf certificate, PEM.
        static let leafPEM = "leaf.pem"
        /// The leaf's private key, PKCS#8 PEM, 0600: it signs every JWS.
        static let leafKey = "leaf.key.pem"
        /// The folder of the roots this CA replaced (`NNNN.der`).
        static let superseded = "superseded"
    }
}
