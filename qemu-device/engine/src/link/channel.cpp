// SPDX-License-Identifier: MIT
// One link direction's packet buffer with credit-based flow control (channel.hpp).
#include "link/channel.hpp"

namespace tpu::engine {

Channel::Channel(uint32_t credits) : slots_(credits) {}

uint64_t Channel::begin_message() {
    std::lock_guard lock(m_);
    return next_msg_++;
}

void Channel::notify_all() {
    tx_cv_.notify_all();
    rx_cv_.notify_all();
}

LinkWait Channel::acquire(const std::atomic<bool> &abort, Packet **out) {
    std::unique_lock lock(m_);
    for (;;) {
        if (abort.load())
            return LinkWait::Aborted;
        if (!up_)
            return LinkWait::Down;
        if (tail_ - head_ < slots_.size())
            break;
        tx_waiting_++;
        tx_cv_.wait(lock);
        tx_waiting_--;
    }
    *out = &slots_[tail_ % slots_.size()];
    return LinkWait::Ok;
}

void Channel::publish(bool last) {
    bool wake;
    {
        std::lock_guard lock(m_);
        if (!up_)
            return; // went down meanwhile: the packet goes with the rest
        tail_++;
        if (listener_)
            listener_();
        wake = rx_waiting_ && (last || tail_ - head_ >= batch());
    }
    if (wake)
        rx_cv_.notify_all();
}

void Channel::cut(uint64_t msg) {
    {
        std::lock_guard lock(m_);
        cut_ = msg;
        cut_at_ = tail_;
        cut_pending_ = true;
        if (listener_)
            listener_();
    }
    notify_all();
}

LinkWait Channel::peek(const std::atomic<bool> &abort, uint64_t msg, const Packet **out) {
    std::unique_lock lock(m_);
    for (;;) {
        if (abort.load())
            return LinkWait::Aborted;
        if (!up_)
            return LinkWait::Down;
        if (tail_ != head_)
            break;
        if (msg != 0 && cut_ == msg)
            return LinkWait::Cut;
        rx_waiting_++;
        rx_cv_.wait(lock);
        rx_waiting_--;
    }
    *out = &slots_[head_ % slots_.size()];
    return LinkWait::Ok;
}

void Channel::pop(bool last) {
    bool wake;
    {
        std::lock_guard lock(m_);
        if (tail_ != head_) {
            head_++;
            freed_++;
            if (listener_)
                listener_();
        }
        wake = tx_waiting_ && (last || slots_.size() - (tail_ - head_) >= batch());
    }
    if (wake)
        tx_cv_.notify_all();
}

void Channel::kick() {
    bool wake;
    {
        std::lock_guard lock(m_);
        wake = tx_waiting_ || rx_waiting_;
    }
    if (wake)
        notify_all();
}

uint32_t Channel::flush() {
    uint32_t dropped;
    {
        std::lock_guard lock(m_);
        dropped = uint32_t(tail_ - head_);
        head_ = tail_;
        forwarded_ = tail_;
        freed_ += dropped;
        if (dropped && listener_)
            listener_();
    }
    notify_all();
    return dropped;
}

void Channel::set_up(bool up) {
    {
        std::lock_guard lock(m_);
        up_ = up;
        freed_ += tail_ - head_;
        head_ = tail_;
        forwarded_ = tail_;
        cut_pending_ = false;
    }
    notify_all();
}

bool Channel::up() {
    std::lock_guard lock(m_);
    return up_;
}

void Channel::wake() {
    // Taking the lock orders the wake-up after a waiter's check of the flag.
    { std::lock_guard lock(m_); }
    notify_all();
}

uint32_t Channel::queued() {
    std::lock_guard lock(m_);
    return uint32_t(tail_ - head_);
}

} // namespace tpu::engine

namespace tpu::engine {

void Channel::set_listener(std::function<void()> listener) {
    std::lock_guard lock(m_);
    listener_ = std::move(listener);
}

bool Channel::forward_peek(const Packet **out) {
    std::lock_guard lock(m_);
    if (!up_ || forwarded_ == tail_)
        return false;
    *out = &slots_[forwarded_ % slots_.size()];
    return true;
}

void Channel::forward_done() {
    std::lock_guard lock(m_);
    if (forwarded_ != tail_)
        forwarded_++;
}

bool Channel::forward_cut(uint64_t *msg) {
    std::lock_guard lock(m_);
    if (!up_ || !cut_pending_ || forwarded_ < cut_at_)
        return false;
    cut_pending_ = false;
    *msg = cut_;
    return true;
}

bool Channel::credit(uint32_t count) {
    {
        std::lock_guard lock(m_);
        if (count > forwarded_ - head_)
            return false;
        head_ += count;
        if (!tx_waiting_)
            return true;
    }
    tx_cv_.notify_all();
    return true;
}

Packet *Channel::try_acquire() {
    std::lock_guard lock(m_);
    if (!up_ || tail_ - head_ >= slots_.size())
        return nullptr;
    return &slots_[tail_ % slots_.size()];
}

uint64_t Channel::consumed() {
    std::lock_guard lock(m_);
    return freed_;
}

} // namespace tpu::engine
