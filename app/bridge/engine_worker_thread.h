// EngineWorkerThread<T>: the worker pattern CompileJob and CompareJob share. One engine call at a time runs on its
// own QThread with a ProgressSink whose cancellation token cancel() sets; its Result<T> comes back on the owner's
// thread once the thread has ended, as a value or as a failure (the status code's name and the engine's message).
// Not a QObject (a template cannot be one): the owning job keeps its signals and forwards to them.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>

#include <exception>
#include <functional>
#include <memory>
#include <utility>

#include "kiln/progress.h"
#include "kiln/status.h"

namespace kiln::bridge {

template <typename T>
class EngineWorkerThread {
 public:
  // The engine call: runs on the worker thread with a sink that reports progress and carries the token.
  using Work = std::function<Result<T>(const ProgressSink& sink)>;
  using OnProgress = std::function<void(const ProgressEvent& event)>;
  using OnValue = std::function<void(const T& value)>;
  using OnFailure = std::function<void(const QString& code, const QString& message)>;

  EngineWorkerThread() = default;
  EngineWorkerThread(const EngineWorkerThread&) = delete;
  EngineWorkerThread& operator=(const EngineWorkerThread&) = delete;
  // Cancels a running call and waits for it to stop (the engine checks the token between steps, so the wait is
  // short). Nothing is delivered after this.
  ~EngineWorkerThread() {
    if (!thread_) return;
    token_->cancel();
    thread_->wait();
    delete thread_;
  }

  // Starts `work` on a new thread named `threadName` and returns at once; false (nothing started) while a call
  // still runs. `onProgress` runs on the worker thread, once per engine event, in order. When the thread has ended,
  // `onValue` or `onFailure` runs on `owner`'s thread (the outcome is `notRun` if `work` never returned); an
  // exception out of `work` (std::bad_alloc on a huge model) is a RUNTIME_EXCEPTION failure, never a crash.
  bool start(QObject* owner, const QString& threadName, Work work, OnProgress onProgress, OnValue onValue,
             OnFailure onFailure, const char* notRun) {
    if (running_) return false;
    running_ = true;
    token_ = std::make_shared<CancellationToken>();
    outcome_ = std::make_shared<Result<T>>(Status(StatusCode::FAIL, notRun));
    thread_ = QThread::create([work = std::move(work), onProgress = std::move(onProgress), token = token_,
                               outcome = outcome_] {
      try {
        ProgressSink sink;
        sink.onProgress = onProgress;
        sink.cancellation = token;
        *outcome = work(sink);
      } catch (const std::exception& e) {
        // The engine API does not throw, but std::bad_alloc on a huge model must not terminate the app.
        *outcome = Status(StatusCode::RUNTIME_EXCEPTION, e.what());
      }
    });
    thread_->setObjectName(threadName);
    QObject::connect(thread_, &QThread::finished, owner,
                     [this, onValue = std::move(onValue), onFailure = std::move(onFailure)] {
                       deliver(onValue, onFailure);
                     });
    thread_->start();
    return true;
  }

  // Asks the running call to stop; it ends with a CANCELLED failure. Thread-safe; a no-op when idle. token_ is only
  // replaced by start() on the owner's thread while idle, so a cancel() from the worker thread (a direct progress
  // receiver) always sees the running call's token.
  void cancel() {
    if (auto token = token_) token->cancel();
  }
  // True from start() until the outcome has been delivered.
  bool isRunning() const { return running_; }
  bool isCancelling() const { return running_ && token_ && token_->isCancelled(); }

 private:
  void deliver(const OnValue& onValue, const OnFailure& onFailure) {
    if (!thread_) return;
    thread_->wait();  // finished is emitted just before the thread ends; the outcome is complete either way
    thread_->deleteLater();
    thread_ = nullptr;
    running_ = false;
    const Result<T> outcome = std::move(*outcome_);
    outcome_.reset();
    if (outcome.isOk()) {
      onValue(outcome.value());
    } else {
      onFailure(QString::fromLatin1(statusCodeName(outcome.status().code())),
                QString::fromStdString(outcome.status().message()));
    }
  }

  QThread* thread_ = nullptr;
  std::shared_ptr<CancellationToken> token_;
  // Written by the worker thread before it ends, read on the owner's thread after QThread::finished.
  std::shared_ptr<Result<T>> outcome_;
  bool running_ = false;
};

}  // namespace kiln::bridge
