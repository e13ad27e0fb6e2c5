import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** Whether realtime change streaming is on for one table of a project's database. */
export const ProjectPublicationEntity = defineEntity({
  name: 'ProjectPublication',
  tableName: 'project_publications',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    tableName: p.text(),
    enabled: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type ProjectPublication = InferEntity<typeof ProjectPublicationEntity>;
