; TypeScript and TSX tag query for memory-service's indexer (one file serves both grammars).

(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; Interface members and abstract methods: the API of a type, even without a body.
(interface_body
  (method_signature
    name: (property_identifier) @name) @definition.method)

(class_body
  (abstract_method_signature
    name: (property_identifier) @name) @definition.method)

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method

; namespace X { ... }: qualifies the names inside it, is not a unit itself.
(internal_module
  name: [(identifier) (nested_identifier)] @name
  body: (statement_block)) @scope.namespace

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

(extends_clause
  value: (_) @reference.inherit)

(implements_clause
  [(type_identifier) (generic_type) (nested_type_identifier)] @reference.inherit)

(extends_type_clause
  type: (_) @reference.inherit)
