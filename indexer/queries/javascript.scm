; JavaScript (and JSX) tag query for memory-service's indexer.

(class_declaration
  name: (identifier) @name) @definition.class

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; const f = () => ... / const f = function () {...}
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; class fields holding a function: handleClick = () => {...}
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method

((call_expression
  function: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.call
  (#not-eq? @name "require"))

(new_expression
  constructor: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.call

(import_statement
  source: (string (string_fragment) @reference.import))

(export_statement
  source: (string (string_fragment) @reference.import))

((call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @reference.import)))
  (#eq? @_require "require"))

(class_heritage
  [(identifier) (member_expression)] @reference.inherit)
