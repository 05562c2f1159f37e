package import Foundation
package import StoreLedgerSimulation

extension TestPKI {
    /// How to mint a ``TestPKI``: the simulator's chain options, realistic by default, with the presets below for
    /// every adversarial variant.
    package typealias Options = SigningChain.Options
}

extension SigningChain.Options {
    /// The realistic default.
    package static var standard: Self { Self() }
    /// Apple's subject names on keys Apple never saw: must not verify against the real G3 root.
    package static var appleLookAlike: Self { Self(names: .appleLookAlike) }
    /// A leaf without Apple's signing extension.
    package static var leafWithoutAppleOID: Self { Self(leafHasAppleOID: false) }
    /// An intermediate without Apple's WWDR extension.
    package static var intermediateWithoutAppleOID: Self { Self(intermediateHasAppleOID: false) }
    /// An intermediate that is not a CA.
    package static var intermediateNotCA: Self { Self(intermediateIsCA: false) }
    /// A leaf valid only during `validity`.
    package static func leafValid(_ validity: ClosedRange<Date>) -> Self { Self(leafValidity: validity) }
}
