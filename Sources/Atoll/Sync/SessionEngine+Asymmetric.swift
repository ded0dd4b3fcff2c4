import Foundation

extension SessionEngine {
    /// After an upload acknowledgement: the realm's asymmetric objects leave the device. Their
    /// creation is in the history, which uploads read; what is not acknowledged yet still goes.
    func removeUploadedAsymmetricObjects() {
        guard sync.enableFlexibleSync, let realm else { return }
        do {
            try realm.removeAsymmetricObjects()
        } catch {
            logger.error("the uploaded asymmetric objects of \(configuration.storageKey) could not be removed: \(error)")
        }
    }
}
