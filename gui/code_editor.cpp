#include "gui/code_editor.hpp"

#include <QFontDatabase>
#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QTextBlock>
#include <QToolTip>
#include <algorithm>

namespace racktwin::gui {
namespace {

const QColor kProblem(0xd6, 0x27, 0x28);

// The margin beside the text: line numbers and problem markers.
class Margin : public QWidget {
 public:
  explicit Margin(CodeEditor* editor) : QWidget(editor), editor_(editor) {}
  QSize sizeHint() const override { return {editor_->margin_width(), 0}; }

 protected:
  void paintEvent(QPaintEvent* event) override { editor_->paint_margin(event); }
  bool event(QEvent* e) override {
    if (e->type() == QEvent::ToolTip) {
      auto* help = static_cast<QHelpEvent*>(e);
      const QString tip = editor_->margin_tip(help->pos().y());
      if (tip.isEmpty())
        QToolTip::hideText();
      else
        QToolTip::showText(help->globalPos(), tip, this);
      return true;
    }
    return QWidget::event(e);
  }

 private:
  CodeEditor* editor_;
};

}  // namespace

CodeEditor::CodeEditor(QWidget* parent) : QPlainTextEdit(parent), margin_(new Margin(this)) {
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  setFont(mono);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTabStopDistance(fontMetrics().horizontalAdvance(' ') * 2);
  connect(this, &QPlainTextEdit::blockCountChanged, this,
          [this] { setViewportMargins(margin_width(), 0, 0, 0); });
  connect(this, &QPlainTextEdit::updateRequest, this,
          [this](const QRect& r, int dy) { update_margin(r, dy); });
  setViewportMargins(margin_width(), 0, 0, 0);
}

int CodeEditor::margin_width() const {
  int digits = 1;
  for (int n = std::max(1, blockCount()); n >= 10; n /= 10) ++digits;
  // Room for the problem marker on the left, then the digits.
  return 14 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(digits, 3) + 6;
}

void CodeEditor::update_margin(const QRect& rect, int dy) {
  if (dy != 0)
    margin_->scroll(0, dy);
  else
    margin_->update(0, rect.y(), margin_->width(), rect.height());
}

void CodeEditor::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  const QRect r = contentsRect();
  margin_->setGeometry(QRect(r.left(), r.top(), margin_width(), r.height()));
}

const TextMark* CodeEditor::mark_on(int line) const {
  for (const auto& m : marks_)
    if (m.line == line) return &m;
  return nullptr;
}

void CodeEditor::paint_margin(QPaintEvent* event) {
  QPainter p(margin_);
  p.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  const int h = fontMetrics().height();
  while (block.isValid() && top <= event->rect().bottom()) {
    const int bottom = top + qRound(blockBoundingRect(block).height());
    if (block.isVisible() && bottom >= event->rect().top()) {
      const int line = block.blockNumber() + 1;
      if (mark_on(line) != nullptr) {
        p.setPen(Qt::NoPen);
        p.setBrush(kProblem);
        p.drawEllipse(QRectF(3, top + (h - 9) / 2.0, 9, 9));
      }
      p.setPen(palette().color(QPalette::PlaceholderText));
      p.drawText(0, top, margin_->width() - 4, h, Qt::AlignRight, QString::number(line));
    }
    block = block.next();
    top = bottom;
  }
}

QString CodeEditor::margin_tip(int y) const {
  const int line = cursorForPosition(QPoint(0, y)).blockNumber() + 1;
  QString tip;
  for (const auto& m : marks_)
    if (m.line == line) tip += (tip.isEmpty() ? "" : "\n") + m.message;
  return tip;
}

void CodeEditor::set_marks(std::vector<TextMark> marks) {
  marks_ = std::move(marks);
  QList<QTextEdit::ExtraSelection> selections;
  for (const auto& m : marks_) {
    const QTextBlock block = document()->findBlockByNumber(m.line - 1);
    if (m.line <= 0 || !block.isValid()) continue;
    QTextEdit::ExtraSelection s;
    s.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
    s.format.setUnderlineColor(kProblem);
    s.format.setToolTip(m.message);
    s.cursor = QTextCursor(block);
    const int length = block.length() - 1;
    if (m.column > 0 && m.column <= length) {
      s.cursor.setPosition(block.position() + m.column - 1);
      s.cursor.movePosition(QTextCursor::EndOfWord, QTextCursor::KeepAnchor);
      if (!s.cursor.hasSelection())
        s.cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    } else {
      s.cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    }
    selections.push_back(s);
  }
  setExtraSelections(selections);
  margin_->update();
}

std::vector<std::pair<int, int>> CodeEditor::underlined() const {
  std::vector<std::pair<int, int>> out;
  for (const auto& s : extraSelections()) {
    const QTextBlock b = document()->findBlock(s.cursor.selectionStart());
    out.emplace_back(b.blockNumber() + 1, s.cursor.selectionStart() - b.position() + 1);
  }
  return out;
}

void CodeEditor::go_to(int line, int column) {
  const QTextBlock block = document()->findBlockByNumber(std::max(line, 1) - 1);
  if (!block.isValid()) return;
  QTextCursor c(block);
  c.setPosition(block.position() + std::clamp(column - 1, 0, std::max(0, block.length() - 1)));
  setTextCursor(c);
  centerCursor();
  setFocus();
}

}  // namespace racktwin::gui
