// One PostgreSQL server for the checkpoint tests (each test takes a database of its own).
import type { TestProject } from "vitest/node"
import { startPostgres } from "./fixtures/postgresServer.js"

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

export default async function setup(project: TestProject) {
  const server = await startPostgres()
  project.provide("postgresUrl", server.url)
  return () => server.stop()
}
