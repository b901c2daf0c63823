; Python tag query for memory-service's indexer.
; Capture names: @definition.<kind> + @name, @reference.call + @name, @reference.import,
; @reference.inherit. Docstrings are read in Python (first string statement of a body).

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

(call
  function: [
    (identifier) @name
    (attribute attribute: (identifier) @name)
  ]) @reference.call

(import_statement
  name: [
    (dotted_name) @reference.import
    (aliased_import name: (dotted_name) @reference.import)
  ])

(import_from_statement
  module_name: (_) @reference.import)

; Bases only: keyword arguments such as metaclass=... are not base classes.
(class_definition
  superclasses: (argument_list
    [(identifier) (attribute)] @reference.inherit))
