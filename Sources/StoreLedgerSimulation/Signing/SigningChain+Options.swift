package import Foundation
package import X509

extension SigningChain {
    /// How to mint a ``SigningChain``: an App Store-like chain by default, with switches for the adversarial
    /// variants tests need (missing Apple OIDs, a non-CA intermediate, a leaf valid only for a while).
    package struct Options: Sendable {
        /// The subject names of the three certificates.
        package var names: Names
        /// Whether the leaf carries Apple's App Store signing extension `1.2.840.113635.100.6.11.1`.
        package var leafHasAppleOID: Bool
        /// Whether the intermediate carries Apple's WWDR extension `1.2.840.113635.100.6.2.1`.
        package var intermediateHasAppleOID: Bool
        /// Whether the intermediate is a CA (`basicConstraints` CA:TRUE, pathlen 0).
        package var intermediateIsCA: Bool
        /// Validity of the root and the intermediate.
        package var caValidity: ClosedRange<Date>
        /// Validity of the leaf.
        package var leafValidity: ClosedRange<Date>

        /// 2020-01-01T00:00:00Z.
        package static let validFrom = Date(timeIntervalSince1970: 1_577_836_800)
        /// 2045-01-01T00:00:00Z.
        package static let validUntil = Date(timeIntervalSince1970: 2_366_841_600)

        /// Creates options; the defaults mint a chain that verifies like Apple's for any date in 2020–2044.
        package init(
            names: Names = .storeLedgerTest,
            leafHasAppleOID: Bool = true,
            intermediateHasAppleOID: Bool = true,
            intermediateIsCA: Bool = true,
            caValidity: ClosedRange<Date> = Options.validFrom...Options.validUntil,
            leafValidity: ClosedRange<Date> = Options.validFrom...Options.validUntil
        ) {
            self.names = names
            self.leafHasAppleOID = leafHasAppleOID
            self.intermediateHasAppleOID = intermediateHasAppleOID
            self.intermediateIsCA = intermediateIsCA
            self.caValidity = caValidity
            self.leafValidity = leafValidity
        }
    }

    /// The subject names of a chain's root, intermediate and leaf.
    package struct Names: Sendable {
        /// The root's subject (and issuer).
        package var root: DistinguishedName
        /// The intermediate's subject.
        package var intermediate: DistinguishedName
        /// The leaf's subject.
        package var leaf: DistinguishedName

        /// Creates names.
        package init(root: DistinguishedName, intermediate: DistinguishedName, leaf: DistinguishedName) {
            self.root = root
            self.intermediate = intermediate
            self.leaf = leaf
        }

        /// `<organization>` / `<prefix> Root CA`, `<prefix> WWDR CA`, `<prefix> App Store Signing`, country US.
        package static func storeLedger(organization: String, prefix: String) -> Names {
            // Building a name from printable strings cannot fail.
            func name(_ commonName: String) -> DistinguishedName {
                try! DistinguishedName {
                    CountryName("US")
                    OrganizationName(organization)
                    CommonName(commonName)
                }
            }
            return Names(
                root: name("\(prefix) Root CA"),
                intermediate: name("\(prefix) WWDR CA"),
                leaf: name("\(prefix) App Store Signing")
            )
        }

        /// `StoreLedger Test Root CA` / `… WWDR CA` / `… App Store Signing` (organization `StoreLedger Tests`).
        package static var storeLedgerTest: Names {
            storeLedger(organization: "StoreLedger Tests", prefix: "StoreLedger Test")
        }

        /// `StoreLedger Development Root CA` / `… WWDR CA` / `… App Store Signing`: the development CA.
        package static var storeLedgerDevelopment: Names {
            storeLedger(organization: "StoreLedger Development", prefix: "StoreLedger Development")
        }

        /// Apple's real subject names (Apple Root CA - G3, WWDR G6, receipt signing), in Apple's attribute order
        /// (CN, OU, O, C) so issuer names match byte for byte. On other keys they must not verify under G3.
        package static var appleLookAlike: Names {
            // Building a name from printable strings cannot fail.
            func name(_ commonName: String, _ unit: String) -> DistinguishedName {
                try! DistinguishedName {
                    CommonName(commonName)
                    OrganizationalUnitName(unit)
                    OrganizationName("Apple Inc.")
                    CountryName("US")
                }
            }
            return Names(
                root: name("Apple Root CA - G3", "Apple Certification Authority"),
                intermediate: name("Apple Worldwide Developer Relations Certification Authority", "G6"),
                leaf: name("Prod ECC Mac App Store and iTunes Store Receipt Signing", "Apple Worldwide Developer Relations")
            )
        }
    }
}
