; JSX patterns, appended to the JavaScript and TSX queries (plain TypeScript has no JSX nodes).
; Rendering a component (<Button .../>) is calling it; lower-case tags are HTML elements.

((jsx_opening_element
  name: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.call
  (#match? @name "^[A-Z]"))

((jsx_self_closing_element
  name: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.call
  (#match? @name "^[A-Z]"))
