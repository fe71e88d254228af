/** The API's Refs, as module read shapes hold them: only the ID is read (the URI is not used). */
import { z } from 'zod';

export const refSchema = z.object({ id: z.string() });
