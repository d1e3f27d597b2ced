#pragma once

#include "core/engine/jobs/boundedqueue.h"
#include "core/model/error.h"

#include <exception>
#include <stop_token>
#include <thread>

namespace driftless::core {

/// Runs `produce` on a reader thread and `consume` on the calling thread, joined by `queue`.
/// The first error on either side stops the other and is rethrown here; when the consumer fails
/// because the producer did, the producer's error (the cause) is the one rethrown; a producer
/// that only stopped because the consumer failed (Cancelled) does not hide the consumer's error.
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
        const std::exception_ptr consumerError = std::current_exception();
        reader.request_stop();
        queue.close(true);
        reader.join();
        bool producerCancelled = false;
        if (producerError) {
            try {
                std::rethrow_exception(producerError);
            } catch (const Cancelled &) {
                producerCancelled = true;
            } catch (...) {
            }
        }
        if (producerError && !producerCancelled)
            std::rethrow_exception(producerError);
        std::rethrow_exception(consumerError);
    }
    reader.join();
    if (producerError)
        std::rethrow_exception(producerError);
}

} // namespace driftless::core
