#pragma once

#include "core/engine/boundedqueue.h"

#include <exception>
#include <stop_token>
#include <thread>

namespace driftless::core {

/// Runs `produce` on a reader thread and `consume` on the calling thread, joined by `queue`.
/// The first error on either side stops the other and is rethrown here; when the consumer fails
/// because the producer did, the producer's error (the cause) is the one rethrown.
template <typename T, typename Produce, typename Consume>
void pipelined(BoundedQueue<T> &queue, std::stop_token outer, Produce &&produce, Consume &&consume)
{
    std::exception_ptr producerError;
    std::jthread reader([&](std::stop_token st) {
        try {
            produce(st);
        } catch (...) {
            producerError = std::current_exception();
        }
        queue.close();
    });
    std::stop_callback forward(outer, [&] { reader.request_stop(); });
    try {
        consume();
    } catch (...) {
        reader.request_stop();
        queue.close(true);
        reader.join();
        if (producerError)
            std::rethrow_exception(producerError);
        throw;
    }
    reader.join();
    if (producerError)
        std::rethrow_exception(producerError);
}

} // namespace driftless::core
