#include "screenshot_tour.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QTimer>

#include <memory>

#include "bench_panel.h"
#include "binary_inspector.h"
#include "compare_panel.h"
#include "compile_panel.h"
#include "environment_info.h"
#include "graph_panel.h"
#include "graph_view.h"
#include "main_window.h"
#include "merge_wizard.h"
#include "model_diff_view.h"
#include "node_overlay.h"

namespace kiln::studio {

namespace {

constexpr int kSettleMs = 300;  // lets layouts, charts and fitted views settle before a grab

}  // namespace

ScreenshotTour::ScreenshotTour(MainWindow& window, QString outputDir, QString modelPath, QString benchShapes)
    : QObject(&window),
      window_(window),
      outputDir_(std::move(outputDir)),
      modelPath_(QFileInfo(modelPath).absoluteFilePath()),
      benchShapes_(std::move(benchShapes)) {
  const QString stem = QFileInfo(modelPath_).completeBaseName();
  ctxPath_ = QDir(outputDir_).filePath(stem + QStringLiteral("_ctx.onnx"));

  steps_.push_back({QStringLiteral("01-graph"), [this](Done done) {
                      connect(window_.graphPanel(), &GraphPanel::layoutReady, stepContext_, done);
                      window_.openModel(modelPath_);
                    }, 120000});
  steps_.push_back({QStringLiteral("02-graph-node-details"), [this](Done done) {
                      window_.graphPanel()->search(QStringLiteral("Conv"));
                      done();
                    }, 5000});
  steps_.push_back({QStringLiteral("03-nodes"), [this](Done done) {
                      window_.tabs()->setCurrentIndex(1);
                      done();
                    }, 5000});
  steps_.push_back({QStringLiteral("04-compile"), [this](Done done) {
                      CompilePanel* panel = window_.compilePanel();
                      window_.tabs()->setCurrentWidget(panel);
                      panel->findChild<QLineEdit*>(QStringLiteral("outputPathEdit"))->setText(ctxPath_);
                      connect(panel, &CompilePanel::compiled, stepContext_, done);
                      startCompile(panel, done);
                    }, 300000});
  steps_.push_back({QStringLiteral("05-graph-compiled-beside-source"), [this](Done done) {
                      window_.tabs()->setCurrentIndex(0);
                      GraphPanel* compiled = window_.compiledGraphPanel();
                      if (!compiled->isBusy()) return done();
                      connect(compiled, &GraphPanel::layoutReady, stepContext_, done);
                    }, 60000});
  // Source <-> compiled: the first EPContext node selected, the source nodes it replaced highlighted beside it.
  steps_.push_back({QStringLiteral("05b-compiled-node-links-source"), [this](Done done) {
                      GraphPanel* compiled = window_.compiledGraphPanel();
                      const auto document = compiled->document();
                      for (int i = 0; document && i < document->nodes().size(); ++i) {
                        if (!document->nodes()[i].epContext) continue;
                        compiled->view()->focusNode(i);
                        break;
                      }
                      done();
                    }, 10000});
  steps_.push_back({QStringLiteral("06-binary-inspector"), [this](Done done) {
                      BinaryInspector* inspector = window_.binaryInspector();
                      connect(inspector, &BinaryInspector::inspected, stepContext_, [inspector, done] {
                        // The section table with the graphs section's bytes in the hex view below it.
                        for (QTabWidget* tabs : inspector->findChildren<QTabWidget*>()) {
                          for (int i = 0; i < tabs->count(); ++i) {
                            if (tabs->tabText(i).remove(QLatin1Char('&')) == QStringLiteral("Sections")) {
                              tabs->setCurrentIndex(i);
                            }
                          }
                        }
                        inspector->selectSection(1);
                        done();
                      });
                      window_.inspectBinary(ctxPath_);
                    }, 60000});
  // The SPIR-V tab: the pipeline most nodes use selected, those nodes listed beside its disassembly.
  steps_.push_back({QStringLiteral("06b-spirv-users"), [this](Done done) {
                      BinaryInspector* inspector = window_.binaryInspector();
                      const auto& inspection = inspector->inspection();
                      if (!inspection || inspection->binaries.isEmpty()) {
                        errors_ << QStringLiteral("06b-spirv-users: no binary on display (run step 06 first)");
                        return done();
                      }
                      const auto& pipelines = inspection->binaries.first().pipelines;
                      int most = 0;
                      for (int i = 0; i < pipelines.size(); ++i) {
                        if (pipelines[i].users.size() > pipelines[most].users.size()) most = i;
                      }
                      inspector->selectPipeline(most);
                      done();
                    }, 10000});
  steps_.push_back({QStringLiteral("07-merge-preview"), [this](Done done) {
                      MergeWizard* wizard = window_.openMergeWizard();
                      wizard->resize(1100, 700);
                      mergeWizard_ = wizard;
                      wizard->addModel(ctxPath_, QStringLiteral("a_"));
                      wizard->addModel(ctxPath_, QStringLiteral("b_"));
                      auto advanced = std::make_shared<bool>(false);
                      auto advance = [this, wizard, done, advanced] {
                        if (*advanced || !wizard->modelsSettled()) return;
                        *advanced = true;
                        wizard->next();  // connections
                        wizard->next();  // preview (tables and conflicts)
                        // The merged graph: shot once it is laid out.
                        connect(wizard, &MergeWizard::graphPreviewReady, stepContext_, done);
                        wizard->next();
                        if (wizard->currentId() != MergeWizard::GraphPage) {
                          errors_ << QStringLiteral("07-merge-preview: the wizard stayed on page %1").arg(wizard->currentId());
                          done();
                        }
                      };
                      connect(wizard, &MergeWizard::modelsInspected, stepContext_, advance);
                      advance();
                    }, 60000});
  steps_.push_back({QStringLiteral("08-benchmark"), [this](Done done) {
                      BenchPanel* bench = window_.benchPanel();
                      window_.tabs()->setCurrentWidget(bench);
                      bench->setModes({QStringLiteral("cold"), QStringLiteral("pipeline-cache"),
                                       QStringLiteral("epctx-file"), QStringLiteral("in-process")});
                      bench->setDriverCaches({QStringLiteral("warm")});
                      bench->setRuns(3);
                      bench->setInferences(1);
                      bench->setShapes(benchShapes_);
                      connect(bench, &BenchPanel::benchmarkFinished, stepContext_, done);
                      connect(bench, &BenchPanel::benchmarkFailed, stepContext_,
                              recordFailure(QStringLiteral("benchmark: "), done));
                      bench->startBenchmark();
                    }, 600000});
  // The rest of the benchmark: latency bars with their values, the stage breakdown (the panel scrolled down).
  steps_.push_back({QStringLiteral("08b-benchmark-latency"), [this](Done done) {
                      BenchPanel* bench = window_.benchPanel();
                      auto* area = bench->findChild<QScrollArea*>(QStringLiteral("chartsArea"));
                      auto* latency = bench->findChild<QWidget*>(QStringLiteral("latencyChart"));
                      if (!area || !latency) return done();
                      // After the charts' new layout has settled (a finished bench re-arranges them).
                      QTimer::singleShot(kSettleMs, stepContext_, [area, latency, done] {
                        if (area->widget() && area->widget()->layout()) area->widget()->layout()->activate();
                        // Scrolled by hand: ensureWidgetVisible follows a chart view's (empty) input-method cursor.
                        area->verticalScrollBar()->setValue(latency->mapTo(area->widget(), QPoint(0, 0)).y() - 6);
                        done();
                      });
                    }, 5000});
  steps_.push_back({QStringLiteral("09-about"), [this](Done done) {
                      for (QAction* action : window_.findChildren<QAction*>()) {
                        if (action->menuRole() == QAction::AboutRole) action->trigger();
                      }
                      // The Vulkan driver line arrives from a worker thread; give it time.
                      QTimer::singleShot(3000, stepContext_, done);
                    }, 10000});
  // Opening a second model must leave nothing of the first compile: the output path beside the new model, an empty
  // Result pane that names it, no old progress or error.
  steps_.push_back({QStringLiteral("10-compile-after-second-model"), [this](Done done) {
                      if (auto* box = window_.findChild<QMessageBox*>()) box->close();
                      const QString second = bridge::sampleModelPath();
                      window_.tabs()->setCurrentWidget(window_.compilePanel());
                      if (second.isEmpty() || QFileInfo(second).absoluteFilePath() == modelPath_) {
                        errors_ << QStringLiteral("10-compile-after-second-model: no second model (sample model)");
                        return done();
                      }
                      connect(&window_, &MainWindow::modelLoaded, stepContext_, done);
                      window_.openModel(second);
                    }, 60000});
  // The Compare panel on the model now open: Vulkan against the CPU, every node compared, the errors as overlay.
  steps_.push_back({QStringLiteral("10b-compare"), [this](Done done) {
                      ComparePanel* compare = window_.comparePanel();
                      window_.tabs()->setCurrentWidget(compare);
                      compare->configure(QStringLiteral("vulkan"), QStringLiteral("cpu"));
                      compare->setCompareEveryNode(true);
                      connect(compare, &ComparePanel::finished, stepContext_, done);
                      startCompare(compare, false, done);
                    }, 300000});
  steps_.push_back({QStringLiteral("10c-graph-error-overlay"), [this](Done done) {
                      window_.tabs()->setCurrentIndex(0);
                      done();
                    }, 5000});
}

std::function<void(const QString&)> ScreenshotTour::recordFailure(const QString& prefix, const Done& done) {
  return [this, prefix, done](const QString& message) {
    errors_ << prefix + message;
    done();
  };
}

void ScreenshotTour::waitForLayout(GraphPanel* panel, const Done& done, const std::function<void()>& start) {
  connect(panel, &GraphPanel::layoutReady, stepContext_, done);
  connect(panel, &GraphPanel::failed, stepContext_, recordFailure(QStringLiteral("graph: "), done));
  start();
}

void ScreenshotTour::startCompare(ComparePanel* compare, bool profile, const Done& done) {
  const QString prefix = profile ? QStringLiteral("profile: ") : QStringLiteral("compare: ");
  connect(compare, &ComparePanel::failed, stepContext_, recordFailure(prefix, done));
  if (!(profile ? compare->profile() : compare->run())) {
    errors_ << prefix + compare->statusText();
    done();
  }
}

void ScreenshotTour::startCompile(CompilePanel* compile, const Done& done) {
  connect(compile, &CompilePanel::compileFailed, stepContext_,
          [this, done](const QString& code, const QString& message) {
            errors_ << QStringLiteral("compile: %1 %2").arg(code, message);
            done();
          });
  compile->startCompile();
}

bool ScreenshotTour::hasBodies(GraphPanel* panel, const QString& step, const QString& needs, const Done& done) {
  if (panel && panel->rootDocument() && !panel->rootDocument()->bodyPaths().isEmpty()) return true;
  // Run alone (--tour-steps), the step finds no model with bodies: an error, never a crash.
  errors_ << QStringLiteral("%1: no model with If/Loop bodies on display (run step %2 first)").arg(step, needs);
  done();
  return false;
}

QString ScreenshotTour::largestBody(const bridge::GraphDocument& root, bool byEpContext) {
  QString best;
  int most = -1;
  for (const QString& path : root.bodyPaths()) {
    int count = 0;
    for (const auto& node : root.body(path)->nodes()) {
      count += node.kind == bridge::GraphNode::Kind::Op && (!byEpContext || node.epContext) ? 1 : 0;
    }
    if (count > most) {
      most = count;
      best = path;
    }
  }
  return best;
}

void ScreenshotTour::addControlFlowAndLargeGraphSteps(const QString& ifModel, const QString& bigModel) {
  if (!ifModel.isEmpty()) {
    const QString model = QFileInfo(ifModel).absoluteFilePath();
    const QString ctx = QDir(outputDir_).filePath(QFileInfo(model).completeBaseName() + QStringLiteral("_ctx.onnx"));
    steps_.push_back({QStringLiteral("11-if-model-graph"), [this, model](Done done) {
                        window_.tabs()->setCurrentIndex(0);
                        waitForLayout(window_.graphPanel(), done, [this, model] { window_.openModel(model); });
                      }, 60000});
    steps_.push_back({QStringLiteral("12-if-model-body"), [this](Done done) {
                        GraphPanel* panel = window_.graphPanel();
                        if (!hasBodies(panel, QStringLiteral("12-if-model-body"), QStringLiteral("11"), done)) return;
                        waitForLayout(panel, [panel, done] {
                          // A node with folded constants, whose details list them.
                          for (int i = 0; i < panel->document()->nodes().size(); ++i) {
                            if (!panel->document()->nodes()[i].constantInputs.isEmpty()) {
                              panel->selectNode(i);
                              break;
                            }
                          }
                          panel->view()->fitAll();
                          done();
                        }, [panel] { panel->openGraph(largestBody(*panel->rootDocument(), false)); });
                      }, 60000});
    steps_.push_back({QStringLiteral("13-if-model-compiled"), [this, ctx](Done done) {
                        CompilePanel* compile = window_.compilePanel();
                        compile->findChild<QLineEdit*>(QStringLiteral("outputPathEdit"))->setText(ctx);
                        connect(window_.compiledGraphPanel(), &GraphPanel::layoutReady, stepContext_, [this, done] {
                          window_.tabs()->setCurrentIndex(0);
                          done();
                        });
                        startCompile(compile, done);
                      }, 300000});
    steps_.push_back({QStringLiteral("14-if-compiled-body"), [this](Done done) {
                        GraphPanel* panel = window_.compiledGraphPanel();
                        if (!hasBodies(panel, QStringLiteral("14-if-compiled-body"), QStringLiteral("13"), done)) return;
                        waitForLayout(panel, [panel, done] {
                          for (int i = 0; i < panel->document()->nodes().size(); ++i) {
                            if (panel->document()->nodes()[i].epContext) {
                              panel->selectNode(i);
                              break;
                            }
                          }
                          panel->view()->fitAll();
                          done();
                        }, [panel] { panel->openGraph(largestBody(*panel->rootDocument(), true)); });
                      }, 60000});
  }
  if (!bigModel.isEmpty()) {
    const QString model = QFileInfo(bigModel).absoluteFilePath();
    steps_.push_back({QStringLiteral("15-large-graph"), [this, model](Done done) {
                        window_.tabs()->setCurrentIndex(0);
                        waitForLayout(window_.graphPanel(), done, [this, model] { window_.openModel(model); });
                      }, 120000});
    steps_.push_back({QStringLiteral("16-large-graph-expanded"), [this](Done done) {
                        GraphPanel* panel = window_.graphPanel();
                        waitForLayout(panel, done, [panel] { panel->expandAll(); });
                      }, 120000});
    steps_.push_back({QStringLiteral("17-large-graph-node"), [this](Done done) {
                        // A node in the middle, zoomed to read it: the minimap shows where it is.
                        GraphPanel* panel = window_.graphPanel();
                        panel->selectNode(panel->document()->nodes().size() / 2);
                        done();
                      }, 10000});
  }
}

void ScreenshotTour::addFunctionAndOverlaySteps(const QString& functionModel) {
  // Selects the op node named `name` in the main graph panel; false when it is not on display.
  auto selectNamed = [this](const QString& name) {
    GraphPanel* panel = window_.graphPanel();
    const int index = panel->document() ? NodeOverlay::nodeIndex(*panel->document(), name) : -1;
    if (index < 0) return false;
    panel->view()->focusNode(index);
    panel->selectNode(index);
    return true;
  };
  if (!functionModel.isEmpty()) {
    const QString model = QFileInfo(functionModel).absoluteFilePath();
    steps_.push_back({QStringLiteral("20-function-body"), [this, model](Done done) {
                        window_.tabs()->setCurrentIndex(0);
                        GraphPanel* panel = window_.graphPanel();
                        // Open the model, then the body of its first function call, with an attribute reference selected.
                        auto openBody = std::make_shared<bool>(false);
                        connect(panel, &GraphPanel::layoutReady, stepContext_, [this, panel, done, openBody] {
                          if (*openBody) {
                            const int alpha = NodeOverlay::nodeIndex(*panel->document(), QStringLiteral("alpha_const"));
                            if (alpha >= 0) panel->selectNode(alpha);
                            panel->view()->fitAll();
                            return done();
                          }
                          *openBody = true;
                          const auto root = panel->rootDocument();
                          if (!root || root->bodyPaths().isEmpty() || !panel->openGraph(root->bodyPaths().first())) {
                            errors_ << QStringLiteral("20-function-body: the model shows no function body");
                            done();
                          }
                        });
                        waitForLayout(panel, [] {}, [this, model] { window_.openModel(model); });
                      }, 60000});
  }
  steps_.push_back({QStringLiteral("21-node-error-histogram"), [this, selectNamed](Done done) {
                      const QString sample = bridge::sampleModelPath();
                      if (sample.isEmpty()) {
                        errors_ << QStringLiteral("21-node-error-histogram: no sample model");
                        return done();
                      }
                      ComparePanel* compare = window_.comparePanel();
                      auto compareThenShow = [this, compare, done, selectNamed] {
                        compare->configure(QStringLiteral("vulkan"), QStringLiteral("cpu"));
                        compare->setCompareEveryNode(true);
                        connect(compare, &ComparePanel::finished, stepContext_, [this, compare, done, selectNamed] {
                          window_.tabs()->setCurrentIndex(0);
                          // The node with the largest error: its statistics and histogram in the details.
                          bool shown = false;
                          for (const auto& [node, _] : compare->overlay().topNodes(20)) {
                            if ((shown = selectNamed(node))) break;
                          }
                          if (!shown) errors_ << QStringLiteral("21-node-error-histogram: no compared node on the graph");
                          done();
                        });
                        startCompare(compare, false, done);
                      };
                      window_.tabs()->setCurrentIndex(0);
                      waitForLayout(window_.graphPanel(), [] {}, [this, sample] { window_.openModel(sample); });
                      connect(window_.graphPanel(), &GraphPanel::layoutReady, stepContext_, compareThenShow);
                    }, 300000});
  steps_.push_back({QStringLiteral("22-profiled-overlay"), [this, selectNamed](Done done) {
                      ComparePanel* compare = window_.comparePanel();
                      compare->configure(QStringLiteral("cpu"), QStringLiteral("cpu"));
                      connect(compare, &ComparePanel::finished, stepContext_, [this, compare, done, selectNamed] {
                        window_.tabs()->setCurrentIndex(0);
                        const auto top = compare->overlay().topNodes(1);
                        if (top.isEmpty() || !selectNamed(top.first().first)) {
                          errors_ << QStringLiteral("22-profiled-overlay: no profiled node on the graph");
                        }
                        done();
                      });
                      startCompare(compare, true, done);
                    }, 120000});
}

void ScreenshotTour::start() {
  if (!filter_.isEmpty()) {
    std::vector<Step> kept;
    for (const Step& step : steps_) {
      for (const QString& prefix : filter_) {
        if (step.name.startsWith(prefix)) {
          kept.push_back(step);
          break;
        }
      }
    }
    steps_ = std::move(kept);
  }
  runStep(0);
}

void ScreenshotTour::runStep(size_t index) {
  if (index == steps_.size()) {
    emit finished(errors_.isEmpty());
    return;
  }
  const Step& step = steps_[index];
  delete stepContext_;  // disconnects the previous step's signal handlers
  stepContext_ = new QObject(this);
  auto finished = std::make_shared<bool>(false);
  const QString name = step.name;
  Done done = [this, index, name, finished] {
    if (*finished) return;
    *finished = true;
    QTimer::singleShot(kSettleMs, this, [this, index, name] {
      grab(name);
      runStep(index + 1);
    });
  };
  QTimer::singleShot(step.timeoutMs, stepContext_, [this, name, done] {
    errors_ << QStringLiteral("%1: timed out").arg(name);
    done();
  });
  step.begin(done);
}

void ScreenshotTour::grab(const QString& name) {
  // Dialogs are their own top-level windows: grab the one the step opened, else the main window.
  QWidget* target = &window_;
  if (name.endsWith(QStringLiteral("merge-preview")) && mergeWizard_) target = mergeWizard_;
  if (name.endsWith(QStringLiteral("model-diff")) && diffView_) target = diffView_;
  if (name.endsWith(QStringLiteral("about"))) {
    if (auto* box = window_.findChild<QMessageBox*>()) target = box;
  }
  const QString file = QDir(outputDir_).filePath(name + QStringLiteral(".png"));
  if (target->grab().save(file, "PNG")) {
    saved_ << file;
  } else {
    errors_ << QStringLiteral("could not write ") + file;
  }
  if (target == mergeWizard_) mergeWizard_->close();
  if (target == diffView_) diffView_->close();
}

// ----- 23: the model diff (issue 33, item 4) -----

void ScreenshotTour::addModelDiffStep(const QString& modelA, const QString& modelB) {
  if (modelA.isEmpty() || modelB.isEmpty()) return;
  const QString a = QFileInfo(modelA).absoluteFilePath(), b = QFileInfo(modelB).absoluteFilePath();
  // Shot once the diff and both layouts are done (the view has no single signal for both), the first change focused.
  steps_.push_back({QStringLiteral("23-model-diff"), [this, a, b](Done done) {
                      diffView_ = window_.openModelDiff(b, a);
                      diffView_->resize(1400, 900);
                      auto* poll = new QTimer(stepContext_);
                      connect(poll, &QTimer::timeout, stepContext_, [this, poll, done] {
                        if (diffView_ && diffView_->isBusy()) return;
                        poll->stop();
                        if (!diffView_ || diffView_->diff().identical()) {
                          errors_ << QStringLiteral("23-model-diff: no changes shown: ") +
                                         (diffView_ ? diffView_->summaryText() : QStringLiteral("window closed"));
                        } else {
                          diffView_->next();
                        }
                        done();
                      });
                      poll->start(100);
                    }, 60000});
}

// ----- 18, 19: readable Fit on PP-OCRv4 det, tensor shapes on edges (issue 22) -----

void ScreenshotTour::addFitAndEdgeShapeSteps() {
  const QString name = QStringLiteral("ch_PP-OCRv4_det_infer.onnx");
  const QString cache = qEnvironmentVariable("KILN_CACHE_DIR", QDir::homePath() + QStringLiteral("/.cache/kiln"));
  QString ppocr = QFileInfo(modelPath_).fileName() == name ? modelPath_ : cache + QStringLiteral("/models/") + name;
  if (!QFileInfo::exists(ppocr)) {
    const QString note = QStringLiteral("18-fit-legible-ppocr skipped: no %1 (tests/tools/fetch_models.sh)").arg(ppocr);
    QFile file(QDir(outputDir_).filePath(QStringLiteral("18-fit-legible-ppocr.skipped.txt")));
    if (file.open(QIODevice::WriteOnly | QIODevice::Text)) file.write(note.toUtf8() + '\n');
    qInfo("%s", qPrintable(note));
    ppocr.clear();
  }
  if (!ppocr.isEmpty()) {
    // Opened as a new user opens it: at Fit, the top of the graph at a scale where every label reads.
    steps_.push_back({QStringLiteral("18-fit-legible-ppocr"), [this, ppocr](Done done) {
                        window_.tabs()->setCurrentIndex(0);
                        connect(window_.graphPanel(), &GraphPanel::layoutReady, stepContext_, done);
                        connect(window_.graphPanel(), &GraphPanel::failed, stepContext_,
                                recordFailure(QStringLiteral("18-fit-legible-ppocr: "), done));
                        window_.openModel(ppocr);
                      }, 120000});
  }
  // The model on display (PP-OCRv4 det after step 18; run alone, it opens that model) with the tour's input shapes
  // given and tensor shapes on edges, at 1:1 around the first Conv, whose details list the concrete shapes.
  steps_.push_back({QStringLiteral("19-edge-shapes"), [this, ppocr](Done done) {
                      window_.tabs()->setCurrentIndex(0);
                      GraphPanel* panel = window_.graphPanel();
                      QAction* toggle = window_.findChild<QAction*>(QStringLiteral("tensorShapesAction"));
                      if (toggle) toggle->setChecked(true);
                      const QString shapes = benchShapes_.isEmpty() ? QStringLiteral("x=1x3x640x640") : benchShapes_;
                      auto applied = std::make_shared<bool>(false);
                      connect(panel, &GraphPanel::inputShapesApplied, stepContext_, [applied] { *applied = true; });
                      connect(panel, &GraphPanel::inputShapesRejected, stepContext_,
                              recordFailure(QStringLiteral("19-edge-shapes: input shapes: "), done));
                      connect(panel, &GraphPanel::failed, stepContext_,
                              recordFailure(QStringLiteral("19-edge-shapes: "), done));
                      connect(panel, &GraphPanel::layoutReady, stepContext_, [this, panel, toggle, shapes, applied, done] {
                        if (!*applied) {  // run alone: the model has just opened
                          panel->applyInputShapes(shapes);  // a refusal calls done() above
                          return;
                        }
                        GraphView* view = panel->view();
                        const auto document = panel->document();
                        view->resetTransform();
                        for (int i = 0; i < document->nodes().size(); ++i) {
                          if (document->nodes()[i].opType == QLatin1String("Conv") && view->nodeItem(i)) {
                            view->focusNode(i);
                            break;
                          }
                        }
                        // Off again once grabbed, so later steps look as they did without this one.
                        if (toggle) QTimer::singleShot(kSettleMs + 100, this, [toggle] { toggle->setChecked(false); });
                        done();
                      });
                      if (!panel->rootDocument()) {
                        window_.openModel(ppocr.isEmpty() ? modelPath_ : ppocr);
                      } else {
                        panel->applyInputShapes(shapes);
                      }
                    }, 180000});
}

}  // namespace kiln::studio
