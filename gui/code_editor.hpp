#pragma once
// A plain-text editor with line numbers in a margin, and problems marked where they are: a wavy
// underline from the problem's column to the end of its word (the whole line when the column is
// not known) and a marker in the margin beside the line, with the message as its tooltip.

#include <QPlainTextEdit>
#include <vector>

namespace racktwin::gui {

// A problem at a place in the text; line and column are 1-based, 0 when not known.
struct TextMark {
  int line = 0;
  int column = 0;
  QString message;
};

class CodeEditor : public QPlainTextEdit {
  Q_OBJECT
 public:
  explicit CodeEditor(QWidget* parent = nullptr);

  // Marks the problems (and clears the previous ones); a mark without a line is not drawn.
  void set_marks(std::vector<TextMark> marks);
  const std::vector<TextMark>& marks() const { return marks_; }
  // The underlines drawn, for tests: (1-based line, column of the start) of each.
  std::vector<std::pair<int, int>> underlined() const;
  // Moves the cursor to a 1-based line and column and shows it.
  void go_to(int line, int column);

  // The margin's width, its drawing, and the message of the problem at a height in it.
  int margin_width() const;
  void paint_margin(QPaintEvent* event);
  QString margin_tip(int y) const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void update_margin(const QRect& rect, int dy);
  const TextMark* mark_on(int line) const;

  QWidget* margin_ = nullptr;
  std::vector<TextMark> marks_;
};

}  // namespace racktwin::gui
