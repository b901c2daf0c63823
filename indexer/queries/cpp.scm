; C++ tag query for memory-service's indexer.
; Out-of-line definitions (void Circle::print()) capture the qualified_identifier as @name;
; the indexer splits it into owner and name.

(function_definition
  declarator: [
    (function_declarator declarator: (_) @name)
    (pointer_declarator declarator: (function_declarator declarator: (_) @name))
    (reference_declarator (function_declarator declarator: (_) @name))
    (pointer_declarator declarator: (pointer_declarator
      declarator: (function_declarator declarator: (_) @name)))
  ]) @definition.function

(class_specifier
  name: (type_identifier) @name
  body: (_)) @definition.class

(struct_specifier
  name: (type_identifier) @name
  body: (_)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (_)) @definition.union

(enum_specifier
  name: (type_identifier) @name
  body: (_)) @definition.enum

(type_definition
  type: (struct_specifier !name body: (_))
  declarator: (type_identifier) @name) @definition.struct

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name
  body: (declaration_list)) @scope.namespace

(call_expression
  function: [
    (identifier) @name
    (field_expression field: (field_identifier) @name)
    (qualified_identifier name: (identifier) @name)
    (template_function name: (identifier) @name)
    (qualified_identifier name: (template_function name: (identifier) @name))
  ]) @reference.call

(new_expression
  type: [(type_identifier) @name (qualified_identifier name: (type_identifier) @name)]) @reference.call

(preproc_include
  path: (_) @reference.import)

(base_class_clause
  [(type_identifier) (qualified_identifier) (template_type)] @reference.inherit)
