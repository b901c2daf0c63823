; Java tag query for memory-service's indexer.

(class_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(record_declaration
  name: (identifier) @name) @definition.record

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(method_invocation
  name: (identifier) @name) @reference.call

(object_creation_expression
  type: [
    (type_identifier) @name
    (generic_type (type_identifier) @name)
  ]) @reference.call

(import_declaration
  [(scoped_identifier) (identifier)] @reference.import)

(superclass
  [(type_identifier) (generic_type) (scoped_type_identifier)] @reference.inherit)

(super_interfaces
  (type_list
    [(type_identifier) (generic_type) (scoped_type_identifier)] @reference.inherit))

(extends_interfaces
  (type_list
    [(type_identifier) (generic_type) (scoped_type_identifier)] @reference.inherit))
