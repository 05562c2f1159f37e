public import Foundation
import StoreLedgerSimulation

extension TestPKI {
    /// How to mint a ``TestPKI``: realistic by default, with switches for every adversarial variant.
    public struct Options: Sendable {
        /// Which subject names the three certificates carry.
        public enum Names: Sendable {
            /// `StoreLedger Test Root CA` / `… WWDR CA` / `… App Store Signing`.
            case storeLedgerTest
            /// Apple's real subject names (Apple Root CA - G3, WWDR G6, receipt signing) on fresh keys.
            case appleLookAlike
        }

        /// The subject names.
        public var names: Names
        /// Whether the leaf carries Apple's App Store signing extension `1.2.840.113635.100.6.11.1`.
        public var leafHasAppleOID: Bool
        /// Whether the intermediate carries Apple's WWDR extension `1.2.840.113635.100.6.2.1`.
        public var intermediateHasAppleOID: Bool
        /// Whether the intermediate is a CA (`basicConstraints` CA:TRUE, pathlen 0).
        public var intermediateIsCA: Bool
        /// Validity of the root and the intermediate.
        public var caValidity: ClosedRange<Date>
        /// Validity of the leaf (make it end before a payload's `signedDate` to get an expired leaf).
        public var leafValidity: ClosedRange<Date>

        /// 2020-01-01T00:00:00Z.
        public static let validFrom = SigningChain.Options.validFrom
        /// 2045-01-01T00:00:00Z.
        public static let validUntil = SigningChain.Options.validUntil

        /// Creates options; the defaults mint a PKI that verifies like Apple's for any date in 2020–2044.
        public init(
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

        /// The realistic default.
        public static var standard: Options { Options() }
        /// Apple's subject names on keys Apple never saw: must not verify against the real G3 root.
        public static var appleLookAlike: Options { Options(names: .appleLookAlike) }
        /// A leaf without Apple's signing extension.
        public static var leafWithoutAppleOID: Options { Options(leafHasAppleOID: false) }
        /// An intermediate without Apple's WWDR extension.
        public static var intermediateWithoutAppleOID: Options { Options(intermediateHasAppleOID: false) }
        /// An intermediate that is not a CA.
        public static var intermediateNotCA: Options { Options(intermediateIsCA: false) }
        /// A leaf valid only during `validity`.
        public static func leafValid(_ validity: ClosedRange<Date>) -> Options { Options(leafValidity: validity) }

        /// The same switches for ``SigningChain``, which mints.
        var signingChainOptions: SigningChain.Options {
            let chainNames: SigningChain.Names =
                switch names {
                case .storeLedgerTest: .storeLedgerTest
                case .appleLookAlike: .appleLookAlike
                }
            return SigningChain.Options(
                names: chainNames,
                leafHasAppleOID: leafHasAppleOID,
                intermediateHasAppleOID: intermediateHasAppleOID,
                intermediateIsCA: intermediateIsCA,
                caValidity: caValidity,
                leafValidity: leafValidity
            )
        }
    }
}
