#pragma once

class QThreadPool;

namespace driftless::ui {

/// The threads the app's own background work runs on: live snapshots built for the window, the
/// local engine door's requests. Not QThreadPool::globalInstance(): Qt's raster paint engine
/// splits large fills across the global pool and the UI thread waits for them, so a snapshot
/// build of 10,000 tables queued there held a paint for its whole length (B12: a 70 ms stall
/// with the UI thread asleep in QSemaphore::acquire under QRasterPaintEngine::fill).
QThreadPool *workPool();

} // namespace driftless::ui
