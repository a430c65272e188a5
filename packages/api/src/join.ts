import type { JoinType, Record as AnyRecord } from './transformations.js';
import type { MutableTransformation, TransformationRegistry } from './transformation-registry.js';

const JOIN_NAMES: { readonly [t in JoinType]: string } = {
  inner: 'Join',
  leftOuter: 'LeftOuterJoin',
  rightOuter: 'RightOuterJoin',
  fullOuter: 'FullOuterJoin',
};

/** The join operator over two keyBy operators (left, then right): two HASH edges into one vertex. */
export function addJoin(
  env: TransformationRegistry,
  type: JoinType,
  left: MutableTransformation,
  right: MutableTransformation,
  fn: (l: AnyRecord, r: AnyRecord) => AnyRecord,
): MutableTransformation {
  return env.addTransformation(
    {
      kind: 'join',
      name: JOIN_NAMES[type],
      left: left.id,
      right: right.id,
      fn,
      ...(type !== 'inner' ? { joinType: type } : {}),
    },
    left,
    right,
  );
}
