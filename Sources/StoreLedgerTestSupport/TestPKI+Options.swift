public import Foundation
public import StoreLedgerSimulation

extension TestPKI {
    /// How to mint a ``TestPKI``: the simulator's chain options, realistic by default, with the presets below for
    /// every adversarial variant.
    public typealias Options = SigningChain.Options
}

extension SigningChain.Options {
    /// The realistic default.
    public static var standard: Self { Self() }
    /// Apple's subject names on keys Apple never saw: must not verify against the real G3 root.
    public static var appleLookAlike: Self { Self(names: .appleLookAlike) }
    /// A leaf without Apple's signing extension.
    public static var leafWithoutAppleOID: Self { Self(leafHasAppleOID: false) }
    /// An intermediate without Apple's WWDR extension.
    public static var intermediateWithoutAppleOID: Self { Self(intermediateHasAppleOID: false) }
    /// An intermediate that is not a CA.
    public static var intermediateNotCA: Self { Self(intermediateIsCA: false) }
    /// A leaf valid only during `validity`.
    public static func leafValid(_ validity: ClosedRange<Date>) -> Self { Self(leafValidity: validity) }
}
