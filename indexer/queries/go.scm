; Go tag query for memory-service's indexer.

(function_declaration
  name: (identifier) @name) @definition.function

; The receiver type (T, *T, T[K]) qualifies the method: Circle.Area.
(method_declaration
  receiver: (parameter_list
    (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(interface_type
  (method_elem
    name: (field_identifier) @name) @definition.method)

(call_expression
  function: [
    (identifier) @name
    (selector_expression field: (field_identifier) @name)
  ]) @reference.call

(import_spec
  path: (_) @reference.import)

; Embedding is Go's inheritance: an anonymous struct field or an embedded interface.
(struct_type
  (field_declaration_list
    (field_declaration
      !name
      type: [(type_identifier) (qualified_type) (pointer_type) (generic_type)] @reference.inherit)))

(interface_type
  (type_elem
    [(type_identifier) (qualified_type)] @reference.inherit))
