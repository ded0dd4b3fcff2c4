import Testing

/// The app-services and sync-surface suites that start servers run one test at a time (see
/// AtollServerTests' `SerialAuthTests`): all of them at once beside the rest of the suite starved
/// a 2-core machine into request timeouts.
@Suite(.serialized) struct SerialAppServicesTests {}
