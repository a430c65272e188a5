import protobuf from 'protobufjs';

/**
 * Plans of the JobEventStore's codec (proto-codec.ts): per message type, its fields in wire
 * order with kind, tag and nested plan, read by reflection from core's one protobufjs Root of
 * proto/ (`protobufRoot()`), so nothing about a message is hand-copied. proto-codegen.ts
 * compiles them.
 */

export const enum Kind {
  Double,
  Float,
  Int32,
  Uint32,
  Sint32,
  Fixed32,
  Sfixed32,
  Int64,
  Uint64,
  Sint64,
  Fixed64,
  Sfixed64,
  Bool,
  String,
  Bytes,
  Enum,
  Message,
}

const KIND_OF: Record<string, Kind> = {
  double: Kind.Double,
  float: Kind.Float,
  int32: Kind.Int32,
  uint32: Kind.Uint32,
  sint32: Kind.Sint32,
  fixed32: Kind.Fixed32,
  sfixed32: Kind.Sfixed32,
  int64: Kind.Int64,
  uint64: Kind.Uint64,
  sint64: Kind.Sint64,
  fixed64: Kind.Fixed64,
  sfixed64: Kind.Sfixed64,
  bool: Kind.Bool,
  string: Kind.String,
  bytes: Kind.Bytes,
};

/** Wire type of a single (unpacked) value of each kind. */
const WIRE_OF: Record<Kind, number> = {
  [Kind.Double]: 1,
  [Kind.Float]: 5,
  [Kind.Int32]: 0,
  [Kind.Uint32]: 0,
  [Kind.Sint32]: 0,
  [Kind.Fixed32]: 5,
  [Kind.Sfixed32]: 5,
  [Kind.Int64]: 0,
  [Kind.Uint64]: 0,
  [Kind.Sint64]: 0,
  [Kind.Fixed64]: 1,
  [Kind.Sfixed64]: 1,
  [Kind.Bool]: 0,
  [Kind.String]: 2,
  [Kind.Bytes]: 2,
  [Kind.Enum]: 0,
  [Kind.Message]: 2,
};

export interface FieldPlan {
  readonly name: string;
  readonly id: number;
  readonly kind: Kind;
  readonly repeated: boolean;
  readonly packed: boolean;
  readonly tag: number;
  readonly packedTag: number;
  readonly wire: number;
  readonly fullName: string;
  message?: MessagePlan;
  enumValues?: Record<string, number>;
  enumNames?: Record<number, string>;
  enumDefault?: string;
}

export interface MessagePlan {
  readonly id: number;
  readonly fullName: string;
  /** Sorted by field number: the order protobufjs writes them in. */
  fields: FieldPlan[];
  /** fieldById[id] for small ids; larger ids go through byIdMap. */
  fieldById: (FieldPlan | undefined)[];
  byIdMap: Map<number, FieldPlan>;
  supported: boolean;
}

/** Field names end up in generated source: only plain identifiers are compiled. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const plans = new Map<string, MessagePlan>();

export function planFor(type: protobuf.Type): MessagePlan {
  const cached = plans.get(type.fullName);
  if (cached) return cached;
  const plan: MessagePlan = {
    id: plans.size,
    fullName: type.fullName,
    fields: [],
    fieldById: [],
    byIdMap: new Map(),
    supported: true,
  };
  // Registered before its fields so that recursive types terminate.
  plans.set(type.fullName, plan);
  if (type.oneofsArray.length > 0) plan.supported = false;
  const sorted = type.fieldsArray.slice().sort((a, b) => a.id - b.id);
  for (const f of sorted) {
    f.resolve();
    if (f.map || f.delimited || f.partOf || !IDENTIFIER.test(f.name)) {
      plan.supported = false;
      continue;
    }
    let kind: Kind;
    const field: Partial<FieldPlan> & { name: string } = { name: f.name };
    if (f.resolvedType instanceof protobuf.Enum) {
      kind = Kind.Enum;
      field.enumValues = f.resolvedType.values;
      field.enumNames = f.resolvedType.valuesById;
      field.enumDefault = f.resolvedType.valuesById[f.typeDefault as number] ?? String(f.typeDefault);
    } else if (f.resolvedType instanceof protobuf.Type) {
      kind = Kind.Message;
      const sub = planFor(f.resolvedType);
      field.message = sub;
    } else {
      const k = KIND_OF[f.type];
      if (k === undefined) {
        plan.supported = false;
        continue;
      }
      kind = k;
    }
    const wire = WIRE_OF[kind];
    const packable = kind !== Kind.String && kind !== Kind.Bytes && kind !== Kind.Message;
    const full: FieldPlan = {
      ...field,
      name: f.name,
      id: f.id,
      kind,
      repeated: f.repeated,
      packed: f.repeated && f.packed && packable,
      tag: ((f.id << 3) | wire) >>> 0,
      packedTag: ((f.id << 3) | 2) >>> 0,
      wire,
      fullName: f.fullName.replace(/^\./, ''),
    };
    plan.fields.push(full);
    if (f.id < 64) plan.fieldById[f.id] = full;
    else plan.byIdMap.set(f.id, full);
  }
  return plan;
}

/** A plan is usable only if every message type reachable from it is supported. */
export function fullySupported(plan: MessagePlan, seen = new Set<MessagePlan>()): boolean {
  if (seen.has(plan)) return true;
  seen.add(plan);
  if (!plan.supported) return false;
  return plan.fields.every((f) => !f.message || fullySupported(f.message, seen));
}
