#include "node_details_view.h"

#include <algorithm>

#include <QMap>
#include <QSet>
#include <QTextBrowser>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>

#include "node_overlay.h"
#include "value_format.h"

namespace kiln::studio {

namespace {

const QString kInspectScheme = QStringLiteral("kiln-inspect");
const QString kBodyScheme = QStringLiteral("kiln-body");

QString esc(const QString& text) { return text.toHtmlEscaped(); }

QString row(const QString& key, const QString& valueHtml) {
  // Keys never wrap mid-word ("embed_mod|e"); a narrow panel puts the details below the graph, full width.
  return QStringLiteral("<tr><td style='color:#555;padding-right:10px;white-space:nowrap'>%1</td><td>%2</td></tr>")
      .arg(esc(key), valueHtml);
}

QString section(const QString& title) { return QStringLiteral("<h4 style='margin-bottom:2px'>%1</h4>").arg(esc(title)); }

// A node's inputs or outputs, each name with its type on the line below, both the pane's full width: value names
// are long ("/backbone/stage1/conv/Conv_output_0"), and as a key column that does not wrap they squeezed the type
// column of a narrow pane to one character per line.
QString valueRows(const bridge::GraphDocument& document, const std::vector<std::string>& names) {
  QString html;
  for (size_t i = 0; i < names.size(); ++i) {
    const QString name = QString::fromStdString(names[i]);
    QString type = QStringLiteral("<i>(omitted)</i>");
    if (!name.isEmpty()) {
      const auto& values = document.modelInfo().values;
      auto it = values.find(names[i]);
      type = QStringLiteral("<code>%1</code>")
                 .arg(esc(it == values.end() ? QStringLiteral("?") : bridge::formatValueType(it->second)));
    }
    html += QStringLiteral("<tr><td colspan='2'><span style='color:#555'>%1</span><br>&nbsp;&nbsp;%2</td></tr>")
                .arg(esc(name.isEmpty() ? QString::number(i) : name), type);
  }
  return html.isEmpty() ? row(QStringLiteral("-"), QString()) : html;
}

}  // namespace

NodeDetailsView::NodeDetailsView(QWidget* parent) : QWidget(parent), browser_(new QTextBrowser) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(browser_);
  browser_->setOpenLinks(false);  // the link is ours to route, never a file:// open
  connect(browser_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    if (url.scheme() == kInspectScheme && !binaryPath_.isEmpty()) emit inspectBinaryRequested(binaryPath_);
    if (url.scheme() == kBodyScheme) emit openBodyRequested(url.fragment(QUrl::FullyDecoded));
  });
  clear();
}

void NodeDetailsView::clear() {
  binaryPath_.clear();
  nodeHtml_.clear();
  histogram_ = false;
  browser_->setHtml(QStringLiteral("<p style='color:#777'>%1</p>").arg(esc(tr("Select a node in the graph."))));
}

QString NodeDetailsView::text() const { return browser_->toPlainText(); }

void NodeDetailsView::showCluster(const bridge::GraphDocument& document, int cluster) {
  binaryPath_.clear();
  nodeHtml_.clear();
  histogram_ = false;
  if (cluster < 0 || cluster >= document.clusters().size()) return clear();
  const bridge::GraphCluster& c = document.clusters()[cluster];
  QString html = QStringLiteral("<h3>%1</h3><table>").arg(esc(tr("Partition %1").arg(c.name)));
  html += row(tr("Execution provider"), esc(c.executionProvider));
  html += row(tr("Compiled"), c.compiled ? tr("yes") : tr("no (CPU EP nodes)"));
  html += row(tr("Nodes"), QString::number(c.nodes.size()));
  html += QStringLiteral("</table>") + section(tr("Nodes")) + QStringLiteral("<ul>");
  for (int n : c.nodes) html += QStringLiteral("<li>%1</li>").arg(esc(document.nodes()[n].label));
  html += QStringLiteral("</ul>");
  browser_->setHtml(html);
}

void NodeDetailsView::showGroup(const bridge::GraphDocument& document, int group) {
  binaryPath_.clear();
  nodeHtml_.clear();
  histogram_ = false;
  if (group < 0 || group >= document.groups().size()) return clear();
  const bridge::GraphGroup& g = document.groups()[group];
  QString html = QStringLiteral("<h3>%1</h3><table>").arg(esc(tr("Group %1").arg(g.title)));
  html += row(tr("Nodes"), QString::number(g.nodes.size()));
  html += row(tr("Formed by"), esc(g.byScope ? tr("one name scope") : tr("a stretch between narrow points of the graph")));
  if (g.alike > 1) html += row(tr("Repeated block"), esc(tr("%1 of %2 groups with the same ops").arg(g.alikeIndex).arg(g.alike)));
  if (g.cluster >= 0 && g.cluster < document.clusters().size()) {
    const bridge::GraphCluster& c = document.clusters()[g.cluster];
    html += row(tr("Partition"), esc(c.name));
    html += row(tr("Execution provider"), esc(c.executionProvider));
  }
  QMap<QString, int> ops;
  QSet<int> members;
  int fallbacks = 0;
  for (int n : g.nodes) {
    const bridge::GraphNode& node = document.nodes()[n];
    ++ops[node.opType];
    members.insert(n);
    if (node.cpuFallback()) ++fallbacks;
  }
  if (fallbacks > 0) {
    html += row(tr("CPU fallback"), QStringLiteral("<span style='color:#b00000'>%1</span>").arg(esc(tr("%n node(s)", nullptr, fallbacks))));
  }
  // What crosses the group's border: the values it reads from outside and the ones read outside it.
  QSet<QString> reads, feeds;
  for (const bridge::GraphEdge& e : document.edges()) {
    if (members.contains(e.to) && !members.contains(e.from)) reads.insert(e.value);
    if (members.contains(e.from) && !members.contains(e.to)) feeds.insert(e.value);
  }
  html += row(tr("Values in / out"), esc(tr("%1 / %2").arg(reads.size()).arg(feeds.size())));
  html += row(tr("First node"), esc(document.nodes()[g.nodes.first()].displayName()));
  html += row(tr("Last node"), esc(document.nodes()[g.nodes.last()].displayName()));
  html += QStringLiteral("</table>") + section(tr("Ops")) + QStringLiteral("<table>");
  QList<std::pair<int, QString>> byCount;
  for (auto it = ops.begin(); it != ops.end(); ++it) byCount.push_back({-it.value(), it.key()});
  std::sort(byCount.begin(), byCount.end());  // most frequent first, then by name
  for (const auto& [count, op] : byCount) html += row(op, QString::number(-count));
  html += QStringLiteral("</table><p style='color:#777'>%1</p>")
              .arg(esc(tr("Double-click the group to open or close it.")));
  // The members, capped: a 2,000-node group would make the pane a scroll of names.
  constexpr int kListed = 100;
  html += section(tr("Nodes")) + QStringLiteral("<ul>");
  for (int i = 0; i < g.nodes.size() && i < kListed; ++i) {
    html += QStringLiteral("<li>%1</li>").arg(esc(document.nodes()[g.nodes[i]].displayName()));
  }
  html += QStringLiteral("</ul>");
  if (g.nodes.size() > kListed) {
    html += QStringLiteral("<p style='color:#777'>%1</p>").arg(esc(tr("and %1 more").arg(g.nodes.size() - kListed)));
  }
  browser_->setHtml(html);
}

namespace {

// The last step of a body path: "else_branch" of "main/branch.else_branch", "com.ms:Fn" of "main/call.com.ms:Fn".
QString bodyName(const QString& path) {
  const QString last = path.section(u'/', -1);
  return last.contains(u':') ? last.section(u'.', 1) : last.section(u'.', -1);
}

}  // namespace

void NodeDetailsView::showNode(const bridge::GraphDocument& document, int node) {
  binaryPath_.clear();
  nodeHtml_.clear();
  histogram_ = false;
  if (node < 0 || node >= document.nodes().size()) return clear();
  const bridge::GraphNode& n = document.nodes()[node];
  QString html;
  if (n.kind != bridge::GraphNode::Kind::Op) {
    const bool input = n.kind == bridge::GraphNode::Kind::GraphInput;
    const QString title = n.outerScope ? tr("Outer-scope value %1").arg(n.name)
                          : input      ? tr("Graph input %1").arg(n.name)
                                       : tr("Graph output %1").arg(n.name);
    html = QStringLiteral("<h3>%1</h3><table>").arg(esc(title));
    if (n.outerScope) html += row(tr("From"), esc(tr("an enclosing graph (read by this body)")));
    html += valueRows(document, {n.name.toStdString()}) + QStringLiteral("</table>");
    browser_->setHtml(html);
    return;
  }
  const NodeInfo& info = document.nodeInfo(node);
  html = QStringLiteral("<h3>%1</h3><table>").arg(esc(n.displayName()));
  html += row(tr("Op type"), esc(n.opType));
  html += row(tr("Domain"), esc(bridge::formatDomain(info.domain)));
  html += row(tr("Execution provider"),
              n.executionProvider.isEmpty() ? QStringLiteral("<i>%1</i>").arg(esc(tr("none"))) : esc(n.executionProvider));
  if (!n.partition.isEmpty()) html += row(tr("Partition"), esc(n.partition));
  if (n.removedByOptimizer) html += row(tr("Optimizer"), esc(n.optimizerNote));
  if (!n.functionNote.isEmpty()) html += row(tr("Function"), esc(n.functionNote));
  for (const QString& reason : n.fallbackReasons) {
    // Control flow on the CPU is by design: its reasons are information, not a warning.
    html += n.cpuFallback()
                ? row(tr("CPU fallback"), QStringLiteral("<span style='color:#b00000'>%1</span>").arg(esc(reason)))
                : row(tr("On the CPU by design"), esc(reason));
  }
  html += QStringLiteral("</table>");

  if (n.epContextDetails) {
    const bridge::EpContextDetails& d = *n.epContextDetails;
    html += section(tr("EPContext")) + QStringLiteral("<table>");
    html += row(QStringLiteral("source"), esc(d.source.isEmpty() ? tr("(none)") : d.source));
    html += row(QStringLiteral("embed_mode"), QStringLiteral("%1 (%2)").arg(d.embedMode).arg(
                                                  esc(d.embedMode ? tr("binary embedded in the model") : tr("binary in a file"))));
    html += row(QStringLiteral("main_context"), QString::number(d.mainContext));
    html += row(QStringLiteral("partition_name"), esc(d.partitionName));
    // cacheContext is the engine's decoded form: the relative path, or "(embedded, N bytes)"; never the payload.
    html += row(QStringLiteral("ep_cache_context"), esc(d.cacheContext));
    if (d.binarySize > 0) {
      html += row(tr("binary size"), esc(QStringLiteral("%1 (%2 bytes)").arg(bridge::formatByteSize(static_cast<int64_t>(d.binarySize))).arg(d.binarySize)));
    }
    if (d.binaryGraphNodes >= 0) html += row(tr("nodes in binary graph"), QString::number(d.binaryGraphNodes));
    if (!d.sdkVersion.isEmpty()) html += row(QStringLiteral("ep_sdk_version"), esc(d.sdkVersion));
    if (!d.hardwareArchitecture.isEmpty()) html += row(QStringLiteral("hardware_architecture"), esc(d.hardwareArchitecture));
    if (!d.onnxModelFilename.isEmpty()) html += row(QStringLiteral("onnx_model_filename"), esc(d.onnxModelFilename));
    if (d.maxSize > 0) html += row(QStringLiteral("max_size"), QString::number(d.maxSize));
    if (!d.notes.isEmpty()) html += row(QStringLiteral("notes"), esc(d.notes));
    if (!d.problem.isEmpty()) html += row(tr("problem"), QStringLiteral("<span style='color:#b00000'>%1</span>").arg(esc(d.problem)));
    html += QStringLiteral("</table>");
    if (!d.binaryPath.isEmpty()) {
      binaryPath_ = d.binaryPath;
      html += QStringLiteral("<p><a href='%1:binary'>%2</a> <span style='color:#777'>%3</span></p>")
                  .arg(kInspectScheme, esc(tr("Inspect binary")), esc(d.binaryPath));
    } else if (d.embedMode != 0) {
      html += QStringLiteral("<p style='color:#777'>%1</p>").arg(esc(tr("The binary is embedded in the model.")));
    }
  } else if (!info.attributes.empty()) {
    html += section(tr("Attributes")) + QStringLiteral("<table>");
    for (const auto& [key, value] : info.attributes) {
      html += row(QString::fromStdString(key), QStringLiteral("<code>%1</code>").arg(esc(QString::fromStdString(value))));
    }
    html += QStringLiteral("</table>");
  }
  if (!n.bodies.isEmpty()) {
    html += section(tr("Bodies")) + QStringLiteral("<ul>");
    for (const QString& body : n.bodies) {
      QUrl url;
      url.setScheme(kBodyScheme);
      url.setPath(QStringLiteral("graph"));
      url.setFragment(body);
      html += QStringLiteral("<li><a href='%1'>%2</a></li>").arg(esc(url.toString(QUrl::FullyEncoded)), esc(tr("Open %1").arg(bodyName(body))));
    }
    html += QStringLiteral("</ul><p style='color:#777'>%1</p>").arg(esc(tr("Or double-click the node.")));
  }
  if (!n.constantInputs.isEmpty()) {
    html += section(tr("Constants")) + QStringLiteral("<table>");
    for (const QString& name : n.constantInputs) {
      const ConstantInfo* c = document.constant(name);
      if (!c) continue;
      QStringList dims;
      for (int64_t d : c->shape) dims << QString::number(d);
      QString value = QStringLiteral("<code>%1[%2]</code>").arg(esc(QString::fromLatin1(dataTypeName(c->dtype))), dims.join(u','));
      if (c->hasRange) {
        value += QStringLiteral("<br>%1").arg(esc(tr("min %1, max %2, mean %3").arg(c->minimum, 0, 'g', 4).arg(c->maximum, 0, 'g', 4).arg(c->mean, 0, 'g', 4)));
      }
      if (!c->preview.empty()) value += QStringLiteral("<br><code>%1</code>").arg(esc(QString::fromStdString(c->preview)));
      html += row(name, value);
    }
    html += QStringLiteral("</table>");
  }
  html += section(tr("Inputs")) + QStringLiteral("<table>") + valueRows(document, info.inputs) + QStringLiteral("</table>");
  html += section(tr("Outputs")) + QStringLiteral("<table>") + valueRows(document, info.outputs) + QStringLiteral("</table>");
  nodeHtml_ = html;
  browser_->setHtml(html);
}

void NodeDetailsView::appendNodeMetrics(const bridge::NodeMetricRow& metrics, const QString& kind) {
  if (nodeHtml_.isEmpty()) return;  // no op node on display
  const bool compare = kind == QLatin1String("compare");
  QString html = section(compare ? tr("Error against the reference") : tr("Profile")) + QStringLiteral("<table>");
  if (metrics.firstDivergence) {
    html += row(tr("first divergence"), QStringLiteral("<b style='color:#a000b0'>%1</b>").arg(esc(tr("yes: the first node whose outputs differ"))));
  }
  if (!metrics.executionProvider.isEmpty()) html += row(tr("ran on"), esc(bridge::epShortName(metrics.executionProvider)));
  html += QStringLiteral("</table><table>");
  for (auto it = metrics.metrics.begin(); it != metrics.metrics.end(); ++it) {
    // One cell per metric: in a narrow panel the value goes below its name instead of wrapping mid-digit.
    html += QStringLiteral("<tr><td><span style='color:#555'>%1</span> <code>%2</code></td></tr>")
                .arg(esc(it.key()), esc(formatMetric(it.key(), it.value())));
  }
  html += QStringLiteral("</table>");
  histogram_ = compare && !metrics.errorHistogram.isEmpty();
  if (histogram_) {
    qint64 total = 0;
    for (qint64 count : metrics.errorHistogram) total += count;
    const QUrl url(QStringLiteral("kiln-histogram:differences"));
    const int width = std::clamp(browser_->viewport()->width() - 16, 160, 420);  // no horizontal scrolling
    histogramImage_ = errorHistogramImage(metrics.errorHistogram, width, palette().color(QPalette::Text));
    // The image's size is given in the tag: the layout reserves its room even before the resource is attached, so
    // the chart never covers the rows below it.
    html += QStringLiteral("<p style='margin-bottom:0'>%1</p><p style='margin-top:2px'><img src='%2' width='%3' height='%4'></p>")
                .arg(esc(tr("Histogram of |difference| over %1 values, in decades (the first bar: below 1e-10)").arg(total)),
                     url.toString())
                .arg(histogramImage_.width())
                .arg(histogramImage_.height());
  } else if (compare) {
    html += QStringLiteral("<p style='color:#777'>%1</p>").arg(esc(tr("No histogram in this data (written before kiln compare recorded one).")));
  }
  // Right below the node's EP and placement rows: the numbers a click on an overlaid node is for come first.
  QString shown = nodeHtml_;
  const int afterTable = static_cast<int>(shown.indexOf(QStringLiteral("</table>")));
  shown.insert(afterTable < 0 ? shown.size() : afterTable + 8, html);
  browser_->setHtml(shown);
  // Added after setHtml (which clears the document's resources), before the first paint loads the image.
  if (histogram_) browser_->document()->addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("kiln-histogram:differences")), histogramImage_);
}

}  // namespace kiln::studio
