; Rust tag query for memory-service's indexer.

(function_item
  name: (identifier) @name) @definition.function

; Trait method declarations without a body.
(function_signature_item
  name: (identifier) @name) @definition.function

(struct_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(union_item
  name: (type_identifier) @name) @definition.union

(trait_item
  name: (type_identifier) @name) @definition.trait

; impl blocks are not units: they make the functions inside them methods of the type.
(impl_item
  type: (_) @name) @scope.impl

(mod_item
  name: (identifier) @name
  body: (declaration_list)) @scope.namespace

(call_expression
  function: [
    (identifier) @name
    (field_expression field: (field_identifier) @name)
    (scoped_identifier name: (identifier) @name)
    (generic_function function: (identifier) @name)
    (generic_function function: (scoped_identifier name: (identifier) @name))
  ]) @reference.call

(use_declaration
  argument: (_) @reference.import)

; impl Trait for Type, and supertraits (trait A: B + C).
(impl_item
  trait: (_) @reference.inherit)

(trait_item
  bounds: (trait_bounds
    [(type_identifier) (scoped_type_identifier) (generic_type)] @reference.inherit))
